package dev.fairloom.oracle;

import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.util.resource.Resources;

/** Readings of YARN's objects both drivers share. */
final class Views {
  private Views() {}

  static boolean ended(RMContainer c) {
    RMContainerState state = c.getState();
    return state == RMContainerState.COMPLETED
        || state == RMContainerState.KILLED
        || state == RMContainerState.RELEASED
        || state == RMContainerState.EXPIRED;
  }
  /** The app's outstanding ask on `*`, every scheduler key together. */
  static Resource pendingAny(SchedulerApplicationAttempt attempt) {
    Resource total = Resource.newInstance(0L, 0);
    if (attempt == null) {
      return total;
    }
    for (SchedulerRequestKey key : attempt.getAppSchedulingInfo().getSchedulerKeys()) {
      PendingAsk any = attempt.getAppSchedulingInfo().getPendingAsk(key, ResourceRequest.ANY);
      if (any != null && any.getCount() > 0) {
        total = Resources.add(total, Resources.multiply(any.getPerAllocationResource(), any.getCount()));
      }
    }
    return total;
  }}
