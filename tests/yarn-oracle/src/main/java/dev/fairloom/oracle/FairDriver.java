package dev.fairloom.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.placement.ApplicationPlacementContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FSAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FSLeafQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FSQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairAccess;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler;

/** A scenario against YARN's FairScheduler. */
final class FairDriver extends Driver {
  private FairScheduler fs;
  private File allocationFile;

  FairDriver(JsonNode doc) {
    super(doc);
  }

  @Override
  AbstractYarnScheduler<?, ?> scheduler() {
    return fs;
  }

  @Override
  void start() throws Exception {
    if (doc.has("capacity") || doc.has("node_labels")) {
      throw new Unsupported("capacity or node_labels under the Fair Scheduler");
    }
    conf = configuration(FairScheduler.class);
    overlay(conf, doc.get("properties"));
    allocationFile = File.createTempFile("fair-scheduler-", ".xml");
    allocationFile.deleteOnExit();
    // No `allocations` is an empty file, not a missing one: the loader then keeps its path for
    // later reloads, and a missing file would send it looking for fair-scheduler.xml on the
    // classpath. Either way only root and root.default exist, with every default.
    JsonNode allocations = doc.get("allocations");
    writeAllocations(
        allocations == null || allocations.isNull() ? "<allocations></allocations>" : allocations.asText());
    conf.set("yarn.scheduler.fair.allocation.file", allocationFile.getAbsolutePath());
    Scenarios.prepare(doc, conf);
    buildContext();
    fs = new FairScheduler();
    fs.setRMContext(context);
    context.setScheduler(fs);
    fs.setClock(clock);
    fs.init(conf);
    FairAccess.installVirtualTimer(fs, clock::getTime);
  }

  private void writeAllocations(String xml) throws java.io.IOException {
    Files.write(allocationFile.toPath(), xml.getBytes(StandardCharsets.UTF_8));
  }

  @Override
  String submit(App app, ApplicationSubmissionContext asc, JsonNode body) throws Exception {
    if (body.has("node_label") && !body.get("node_label").isNull()) {
      return "node labels are not supported by the Fair Scheduler";
    }
    ApplicationPlacementContext placement;
    try {
      placement = context.getQueuePlacementManager().placeApplication(asc, app.user, false);
    } catch (YarnException e) {
      return e.getMessage();
    }
    if (placement != null) {
      asc.setQueue(placement.getFullQueuePath());
    }
    return addApp(app, asc, placement);
  }

  @Override
  void update() throws Exception {
    // What the allocation loader's thread does on each check (every 10 s in YARN, apart from
    // the update thread): empty dynamic queues go, as do queues waiting to change type. The
    // oracle runs it before each update; fairloom tidies queues at its update too.
    fs.getQueueManager().removeEmptyDynamicQueues();
    fs.getQueueManager().removePendingIncompatibleQueues();
    fs.update();
    FairAccess.preempt(fs);
  }

  @Override
  String reload(JsonNode body) throws Exception {
    if (body.has("capacity")) {
      return "capacity given to the Fair Scheduler";
    }
    if (body.has("allocations")) {
      writeAllocations(body.get("allocations").asText());
      try {
        FairAccess.reloadAllocations(fs);
      } catch (Exception e) {
        return describe(e);
      }
    }
    if (body.has("properties")) {
      overlay(conf, body.get("properties"));
      fs.reinitialize(conf, context);
    }
    return null;
  }

  @Override
  Map<String, Object> observeQueues() throws Exception {
    Map<String, Object> out = Json.object();
    for (FSQueue q : fs.getQueueManager().getQueues()) {
      Map<String, Object> o = Json.object();
      o.put("steady_fair_share", Json.resource(q.getSteadyFairShare()));
      o.put("fair_share", Json.resource(q.getFairShare()));
      o.put("usage", Json.resource(q.getResourceUsage()));
      o.put("demand", Json.resource(q.getDemand()));
      o.put("min_share", Json.resource(q.getMinShare()));
      o.put("max_share", Json.resource(q.getMaxShare()));
      o.put("weight", Double.parseDouble(Float.toString(q.getWeight())));
      o.put("policy", q.getPolicy().getName().toLowerCase());
      o.put("runnable_apps", q.getNumRunnableApps());
      o.put("non_runnable_apps", nonRunnable(q));
      o.put("active", q.isActive());
      o.put("dynamic", q.isDynamic());
      if (q instanceof FSLeafQueue) {
        // YARN keeps AM usage on leaves only.
        o.put("am_usage", Json.resource(FairAccess.amUsage((FSLeafQueue) q)));
        // maxAMShare -1 turns the check off (FSLeafQueue.canRunAppAM): no limit.
        FSLeafQueue leaf = (FSLeafQueue) q;
        o.put("am_limit", leaf.getMaxAMShare() < 0 ? Json.unbounded() : Json.resource(FairAccess.amLimit(leaf)));
      }
      out.put(q.getName(), o);
    }
    return out;
  }

  private static int nonRunnable(FSQueue q) {
    if (q instanceof FSLeafQueue) {
      return FairAccess.nonRunnableApps((FSLeafQueue) q);
    }
    int sum = 0;
    for (FSQueue child : q.getChildQueues()) {
      sum += nonRunnable(child);
    }
    return sum;
  }

  @Override
  String queuePath(SchedulerApplicationAttempt attempt) {
    return attempt.getQueue().getQueueName();
  }

  @Override
  Map<String, Object> observeApp(App app) throws Exception {
    FSAppAttempt attempt = app.accepted() ? fs.getSchedulerApp(app.attempt) : null;
    Map<String, Object> o =
        observeCommon(
            app,
            attempt,
            attempt == null ? null : attempt.getQueue().getName(),
            attempt != null && FairAccess.runnable(attempt),
            attempt != null && attempt.isAmRunning());
    o.put("usage", Json.resource(attempt == null ? null : attempt.getResourceUsage()));
    o.put("demand", Json.resource(attempt == null ? null : attempt.getDemand()));
    o.put("pending", Json.resource(Views.pendingAny(attempt)));
    o.put("fair_share", Json.resource(attempt == null ? null : attempt.getFairShare()));
    o.put("starved", Json.resource(attempt == null ? null : FairAccess.starvation(attempt)));
    o.put("preemption_marked", attempt == null ? 0 : FairAccess.preemptionMarked(attempt));
    return o;
  }

  @Override
  Map<String, Object> observeNode(RMNodeImpl node, SchedulerNode sn) {
    Map<String, Object> o = Json.object();
    o.put("allocated", Json.resource(sn.getAllocatedResource()));
    o.put("available", Json.resource(sn.getUnallocatedResource()));
    o.put("containers", sn.getNumContainers());
    o.put("reserved_for", reservedFor(sn));
    return o;
  }
}
