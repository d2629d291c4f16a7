//! `GET /ws/v1/cluster/apps` filters as YARN's ApplicationsRequestBuilder reads them: empty
//! `user=`, `queue=`, `limit=` and time filters are ignored, not matched; bad numbers,
//! ranges and final statuses are refused with YARN's messages in the RemoteException shape.

mod support;

use serde_json::{json, Value};
use support::{call, start, Rm, FAIR};

fn apps(rm: &Rm, query: &str) -> (u16, Value) {
    call("GET", &rm.url(&format!("/ws/v1/cluster/apps?{query}"), None), None)
}

fn count(v: &Value) -> usize {
    v["apps"]["app"].as_array().map_or(0, Vec::len)
}

fn refused(rm: &Rm, query: &str, message: &str) {
    let (s, v) = apps(rm, query);
    assert_eq!(s, 400, "{query}: {v}");
    assert_eq!(v["RemoteException"]["exception"], "BadRequestException", "{query}: {v}");
    let said = v["RemoteException"]["message"].as_str().unwrap_or_default();
    assert!(said.ends_with(message), "{query}: {said:?} does not end with {message:?}");
}

#[test]
fn the_apps_filters_read_as_yarn_reads_them() {
    let rm = start("rest-filters", &[("yarn.resourcemanager.scheduler.class", FAIR)], None);
    for user in ["alice", "bob"] {
        let (s, _, body) = rm.submit(user, "default", json!({}));
        assert_eq!(s, 202, "{body}");
    }
    let (s, all) = apps(&rm, "");
    assert_eq!((s, count(&all)), (200, 2), "{all}");
    // Empty values are no filter at all.
    for query in ["user=", "queue=", "limit=", "startedTimeBegin=", "finishedTimeEnd=", "finalStatus=", "states="] {
        let (s, v) = apps(&rm, query);
        assert_eq!((s, count(&v)), (200, 2), "{query}: {v}");
    }
    assert_eq!(count(&apps(&rm, "user=alice").1), 1);
    assert_eq!(count(&apps(&rm, "limit=1").1), 1);
    assert_eq!(count(&apps(&rm, "finalStatus=UNDEFINED").1), 2);
    assert_eq!(count(&apps(&rm, "finalStatus=SUCCEEDED").1), 0);
    refused(&rm, "limit=0", "limit value must be greater then 0");
    refused(&rm, "limit=ten", "limit value must be a number!");
    refused(&rm, "limit=%201", "limit value must be a number!");
    refused(&rm, "startedTimeBegin=-1", "startedTimeBegin must be greater than 0");
    refused(&rm, "startedTimeBegin=5&startedTimeEnd=4", "startedTimeEnd must be greater than startTimeBegin");
    refused(&rm, "startedTimeEnd=soon", "startedTimeEnd value must be a number!");
    refused(&rm, "finishedTimeEnd=-2", "finishTimeEnd must be greater than 0");
    refused(&rm, "finishedTimeBegin=9&finishedTimeEnd=3", "finishTimeEnd must be greater than finishTimeBegin");
    // valueOf: exact names only.
    refused(
        &rm,
        "finalStatus=BOGUS",
        "No enum constant org.apache.hadoop.yarn.api.records.FinalApplicationStatus.BOGUS",
    );
    refused(&rm, "finalStatus=succeeded", "FinalApplicationStatus.succeeded");
    refused(&rm, "states=BOGUS", "Invalid application-state BOGUS specified. It should be one of NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED");
}
