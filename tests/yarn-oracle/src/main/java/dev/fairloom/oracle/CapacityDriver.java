package dev.fairloom.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity.ProportionalCapacityPreemptionPolicy;
import org.apache.hadoop.yarn.server.resourcemanager.placement.ApplicationPlacementContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.AbstractLeafQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CSQueue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * A scenario against YARN's CapacityScheduler, with ProportionalCapacityPreemptionPolicy run
 * once per `update` while the monitor switch is on (the monitor thread is never started).
 */
final class CapacityDriver extends Driver {
  private static final String MONITOR = YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS;
  private CapacityScheduler cs;
  private ProportionalCapacityPreemptionPolicy policy;
  private boolean monitor;
  /** Properties and capacity keys as last loaded, for reloads that replace one of them. */
  private JsonNode properties;
  private JsonNode capacity;

  CapacityDriver(JsonNode doc) {
    super(doc);
  }

  @Override
  AbstractYarnScheduler<?, ?> scheduler() {
    return cs;
  }

  @Override
  void start() throws Exception {
    if (doc.has("allocations")) {
      throw new StepError("allocations under the Capacity Scheduler");
    }
    if (doc.has("node_labels") && doc.get("node_labels").size() > 0) {
      throw new Unsupported("node labels in the oracle");
    }
    properties = doc.get("properties");
    capacity = doc.get("capacity");
    conf = configuration();
    Scenarios.prepare(doc, conf);
    buildContext();
    cs = new CapacityScheduler();
    cs.setConf(conf);
    cs.setRMContext(context);
    context.setScheduler(cs);
    cs.setClock(clock);
    cs.init(conf);
    monitor = conf.getBoolean(MONITOR, false);
    policy = new ProportionalCapacityPreemptionPolicy(context, cs, clock);
  }

  /**
   * yarn-site from `properties`, then the capacity keys over it (a key in both takes its
   * `capacity` value, as the scenario format says). Asynchronous scheduling stays off unless the
   * scenario sets it: YARN 3.4's default, and heartbeats allocate only then.
   */
  private Configuration configuration() {
    Configuration c = configuration(CapacityScheduler.class);
    c.setBoolean("yarn.scheduler.capacity.schedule-asynchronously.enable", false);
    overlay(c, properties);
    overlay(c, capacity);
    return c;
  }

  @Override
  String containerName(App app, ContainerId id) {
    // The Capacity Scheduler numbers reservations too: a container's number is YARN's.
    app.named = (int) id.getContainerId();
    return app.name + "/" + id.getContainerId();
  }

  @Override
  String submit(App app, ApplicationSubmissionContext asc, JsonNode body) throws Exception {
    ApplicationPlacementContext placement;
    try {
      placement = context.getQueuePlacementManager().placeApplication(asc, app.user, false);
      Priority priority =
          cs.checkAndGetApplicationPriority(
              asc.getPriority(), UserGroupInformation.createRemoteUser(app.user), asc.getQueue(), app.id);
      asc.setPriority(priority);
    } catch (YarnException e) {
      return e.getMessage();
    }
    return addApp(app, asc, placement);
  }

  /**
   * SchedulerApplicationAttempt stamps its start time from SystemClock, the wall clock, which
   * the Capacity Scheduler's FairOrderingPolicy compares (after usage, before pending demand):
   * two applications submitted in one step would tie in one run and not in the next. The
   * attempt takes the scenario's clock instead, as the Fair Scheduler's attempts do; it is
   * taken out of its leaf's ordering set and put back so that the set stays sorted.
   */
  @Override
  void attemptAdded(App app) throws Exception {
    FiCaSchedulerApp attempt = cs.getApplicationAttempt(app.attempt);
    if (attempt == null) {
      return;
    }
    Collection<FiCaSchedulerApp> ordered =
        attempt.getQueue() instanceof AbstractLeafQueue
            ? ((AbstractLeafQueue) attempt.getQueue()).getOrderingPolicy().getSchedulableEntities()
            : null;
    boolean active = ordered != null && ordered.remove(attempt);
    START_TIME.setLong(attempt, clock.getTime());
    if (active) {
      ordered.add(attempt);
    }
  }

  private static final Field START_TIME = startTimeField();

  private static Field startTimeField() {
    try {
      Field f = SchedulerApplicationAttempt.class.getDeclaredField("startTime");
      f.setAccessible(true);
      return f;
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  void update() {
    if (monitor) {
      policy.editSchedule();
    }
  }

  @Override
  String reload(JsonNode body) throws Exception {
    if (body.has("allocations")) {
      return "allocations given to the Capacity Scheduler";
    }
    JsonNode oldProperties = properties;
    JsonNode oldCapacity = capacity;
    if (body.has("properties")) {
      properties = body.get("properties");
    }
    if (body.has("capacity")) {
      capacity = body.get("capacity");
    }
    Configuration next = configuration();
    try {
      cs.reinitialize(next, context);
    } catch (Exception e) {
      properties = oldProperties;
      capacity = oldCapacity;
      return describe(e);
    }
    conf = next;
    monitor = conf.getBoolean(MONITOR, false);
    return null;
  }

  private List<CSQueue> allQueues() {
    List<CSQueue> out = new ArrayList<>();
    List<CSQueue> todo = new ArrayList<>();
    todo.add(cs.getRootQueue());
    while (!todo.isEmpty()) {
      CSQueue q = todo.remove(todo.size() - 1);
      out.add(q);
      if (q.getChildQueues() != null) {
        todo.addAll(q.getChildQueues());
      }
    }
    return out;
  }

  @Override
  Map<String, Object> observeQueues() {
    Map<String, Object> out = Json.object();
    for (CSQueue q : allQueues()) {
      Map<String, Object> o = Json.object();
      o.put("capacity", Json.resource(q.getEffectiveCapacity("")));
      o.put("max_capacity", Json.resource(q.getEffectiveMaxCapacity("")));
      o.put("usage", Json.resource(q.getQueueResourceUsage().getUsed("")));
      o.put("reserved", Json.resource(q.getQueueResourceUsage().getReserved("")));
      o.put("pending", Json.resource(q.getQueueResourceUsage().getPending("")));
      o.put("used_capacity", (double) q.getQueueCapacities().getUsedCapacity(""));
      if (q instanceof AbstractLeafQueue) {
        AbstractLeafQueue leaf = (AbstractLeafQueue) q;
        o.put("runnable_apps", leaf.getNumActiveApplications());
        o.put("non_runnable_apps", leaf.getNumPendingApplications());
        o.put("am_usage", Json.resource(q.getQueueResourceUsage().getAMUsed("")));
        o.put("am_limit", Json.resource(leaf.calculateAndGetAMResourceLimitPerPartition("")));
      } else {
        o.put("runnable_apps", 0);
        o.put("non_runnable_apps", 0);
      }
      out.put(q.getQueuePath(), o);
    }
    return out;
  }

  @Override
  String queuePath(SchedulerApplicationAttempt attempt) {
    return ((CSQueue) attempt.getQueue()).getQueuePath();
  }

  @Override
  Map<String, Object> observeApp(App app) {
    FiCaSchedulerApp attempt = app.accepted() ? cs.getApplicationAttempt(app.attempt) : null;
    CSQueue queue = attempt == null ? null : (CSQueue) attempt.getQueue();
    boolean runnable = queue instanceof AbstractLeafQueue
        && ((AbstractLeafQueue) queue).getApplications().contains(attempt);
    Map<String, Object> o =
        observeCommon(
            app, attempt, queue == null ? null : queue.getQueuePath(), runnable,
            attempt != null && app.master != null);
    Resource usage = attempt == null ? Resource.newInstance(0L, 0) : attempt.getCurrentConsumption();
    Resource pending = Views.pendingAny(attempt);
    o.put("usage", Json.resource(usage));
    o.put("pending", Json.resource(pending));
    o.put("demand", Json.resource(Resources.add(usage, pending)));
    o.put("preemption_marked", attempt == null ? 0 : marked(attempt));
    if (attempt != null) {
      o.put("priority", attempt.getPriority().getPriority());
    }
    o.put("user", app.user);
    return o;
  }

  /**
   * Containers the policy has marked and that still run: what the AM is warned about
   * (FiCaSchedulerApp.markContainerForPreemption keeps live containers only). A reservation the
   * selector took stays in the policy's map but was dropped, not marked.
   */
  private int marked(FiCaSchedulerApp attempt) {
    int count = 0;
    for (RMContainer c : policy.getToPreemptContainers().keySet()) {
      if (c.getApplicationAttemptId().equals(attempt.getApplicationAttemptId())
          && attempt.getLiveContainersMap().containsKey(c.getContainerId())
          && !Views.ended(c)) {
        count++;
      }
    }
    return count;
  }

  @Override
  Map<String, Object> observeNode(RMNodeImpl node, SchedulerNode sn) {
    Map<String, Object> o = Json.object();
    o.put("allocated", Json.resource(sn.getAllocatedResource()));
    o.put("available", Json.resource(sn.getUnallocatedResource()));
    o.put("containers", sn.getNumContainers());
    o.put("reserved_for", reservedFor(sn));
    o.put("partition", sn.getPartition());
    return o;
  }
}
