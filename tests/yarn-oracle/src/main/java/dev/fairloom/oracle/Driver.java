package dev.fairloom.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.net.NodeBase;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ExecutionType;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.event.Event;
import org.apache.hadoop.yarn.server.resourcemanager.RMContextImpl;
import org.apache.hadoop.yarn.server.resourcemanager.ahs.RMApplicationHistoryWriter;
import org.apache.hadoop.yarn.server.resourcemanager.metrics.NoOpSystemMetricPublisher;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager;
import org.apache.hadoop.yarn.server.resourcemanager.placement.PlacementManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.constraint.AllocationTagsManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.constraint.MemoryPlacementConstraintManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.ContainerAllocationExpirer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeStartedEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.security.AMRMTokenSecretManager;
import org.apache.hadoop.yarn.server.resourcemanager.security.ClientToAMTokenSecretManagerInRM;
import org.apache.hadoop.yarn.server.resourcemanager.security.NMTokenSecretManagerInRM;
import org.apache.hadoop.yarn.server.resourcemanager.security.RMContainerTokenSecretManager;
import org.apache.hadoop.yarn.server.resourcemanager.placement.ApplicationPlacementContext;
import org.apache.hadoop.yarn.util.Records;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;

/**
 * Plays one scenario against one of YARN's schedulers, the way Hadoop's scheduler tests drive
 * them: a hand-built RM context, the scheduler initialised but never started (so none of its
 * threads runs), every event handed to it on this thread, and the RM's own parts (placement,
 * the AM's first ask, pulling and launching containers) done here in the RM's order.
 */
abstract class Driver {
  /** A step the scenario cannot run (fairloom's "scenario" error kind). */
  static final class StepError extends RuntimeException {
    StepError(String message) {
      super(message);
    }
  }

  /** A scenario feature the oracle does not drive (yet). */
  static final class Unsupported extends RuntimeException {
    Unsupported(String message) {
      super(message);
    }
  }

  /** One application of the scenario, by its scenario name. */
  static final class App {
    final String name;
    final ApplicationId id;
    final ApplicationAttemptId attempt;
    final String user;
    final Resource am;
    String rejection;
    boolean finished;
    Container master;
    /** Its leaf's path as last seen (a finished application keeps it, as fairloom does). */
    String queue;
    /** Every container allocated or placed, by name; the live ones are those not completed. */
    final LinkedHashMap<String, RMContainer> containers = new LinkedHashMap<>();
    int named;
    int preempted;
    /** An unmanaged-AM application once scheduled: RUNNING from then on (RMApp never goes back). */
    boolean running;

    App(String name, ApplicationId id, String user, Resource am) {
      this.name = name;
      this.id = id;
      this.attempt = ApplicationAttemptId.newInstance(id, 1);
      this.user = user;
      this.am = am;
    }

    boolean accepted() {
      return rejection == null;
    }
  }

  final JsonNode doc;
  final VirtualClock clock = new VirtualClock();
  final RecordingDispatcher dispatcher = new RecordingDispatcher();
  final LinkedHashMap<String, RMNodeImpl> nodes = new LinkedHashMap<>();
  final LinkedHashMap<String, App> apps = new LinkedHashMap<>();
  final Map<ApplicationAttemptId, App> appsByAttempt = new HashMap<>();
  final List<Object> observations = new ArrayList<>();
  final List<Object> reloads = new ArrayList<>();
  Configuration conf;
  RMContextImpl context;
  String pendingReload;
  private int nodePort = 1;

  Driver(JsonNode doc) {
    this.doc = doc;
  }

  abstract AbstractYarnScheduler<?, ?> scheduler();

  /** The full path of the leaf an attempt is in. */
  abstract String queuePath(SchedulerApplicationAttempt attempt);

  /** Builds and initialises the scheduler; a configuration that does not load throws. */
  abstract void start() throws Exception;

  abstract void update() throws Exception;

  /** A reload step: returns null when applied, else the rejection message. */
  abstract String reload(JsonNode body) throws Exception;

  abstract Map<String, Object> observeQueues() throws Exception;

  abstract Map<String, Object> observeApp(App app) throws Exception;

  abstract Map<String, Object> observeNode(RMNodeImpl node, SchedulerNode schedulerNode)
      throws Exception;

  /** Submission as RMAppManager does it; returns the rejection message or null. */
  abstract String submit(App app, ApplicationSubmissionContext asc, JsonNode body) throws Exception;

  /** A YARN configuration for `scheduler`, its groups from the scenario; parts come on top. */
  static Configuration configuration(Class<?> scheduler) {
    Configuration c = new YarnConfiguration();
    c.set("hadoop.security.group.mapping", ScenarioGroups.class.getName());
    c.set(YarnConfiguration.RM_SCHEDULER, scheduler.getName());
    // ClusterNodeTracker answers the configured maximum allocation until this long after the
    // ResourceManager class loaded (wall clock), and min(configured, largest node) after it: a
    // file run 10 s into one JVM saw another maximum than the same file run alone. Pinned to
    // the first behaviour, which fairloom models (docs/fidelity.md, known differences).
    c.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, Long.MAX_VALUE);
    return c;
  }

  /** A scenario's key-value part (`properties`, `capacity`) over `c`; an absent part is none. */
  static void overlay(Configuration c, JsonNode part) {
    if (part != null) {
      part.fields().forEachRemaining(e -> c.set(e.getKey(), Json.property(e.getValue())));
    }
  }

  /** The RM context Hadoop's tests build by hand (capacity TestUtils.getMockRMContext). */
  void buildContext() {
    ContainerAllocationExpirer expirer = new ContainerAllocationExpirer(dispatcher);
    RMContainerTokenSecretManager containerTokens = new RMContainerTokenSecretManager(conf);
    containerTokens.rollMasterKey();
    NMTokenSecretManagerInRM nmTokens = new NMTokenSecretManagerInRM(conf);
    nmTokens.rollMasterKey();
    context =
        new RMContextImpl(
            dispatcher,
            expirer,
            null,
            null,
            null,
            new AMRMTokenSecretManager(conf, null),
            containerTokens,
            nmTokens,
            new ClientToAMTokenSecretManagerInRM());
    context.setYarnConfiguration(conf);
    context.setSystemMetricsPublisher(new NoOpSystemMetricPublisher());
    context.setRMApplicationHistoryWriter(new RMApplicationHistoryWriter());
    context.setQueuePlacementManager(new PlacementManager());
    context.setAllocationTagsManager(new AllocationTagsManager(context));
    context.setPlacementConstraintManager(new MemoryPlacementConstraintManager());
    RMNodeLabelsManager labels = new RMNodeLabelsManager();
    labels.init(conf);
    context.setNodeLabelManager(labels);
    // `place` is the work-preserving recovery path.
    context.setWorkPreservingRecoveryEnabled(true);
  }

  /** Runs the whole script; the result is the document fairloom's `scenario run` prints. */
  Map<String, Object> run() {
    Map<String, Object> out = Json.object();
    out.put("name", Json.text(doc, "name", ""));
    try {
      start();
    } catch (Unsupported e) {
      return error(out, "unsupported", e.getMessage(), null);
    } catch (Throwable e) {
      return error(out, "config", traced(e), null);
    }
    JsonNode steps = doc.get("steps");
    int index = 0;
    try {
      JsonNode nodesDoc = doc.get("nodes");
      if (nodesDoc != null) {
        for (JsonNode node : nodesDoc) {
          addNode(node);
        }
      }
      if (steps != null) {
        for (JsonNode step : steps) {
          step(index, step);
          deliverSchedulerEvents();
          nodeManagersReport();
          noteUnmanagedRunning();
          index++;
        }
      }
    } catch (Unsupported e) {
      return error(out, "unsupported", e.getMessage(), null);
    } catch (Throwable e) {
      return error(out, "scenario", traced(e), index);
    }
    out.put("observations", observations);
    out.put("reloads", reloads);
    return out;
  }

  /** `describe(e)`, with the stack trace on stderr when ORACLE_TRACE is set. */
  private static String traced(Throwable e) {
    if (System.getenv("ORACLE_TRACE") != null) {
      e.printStackTrace();
    }
    return describe(e);
  }

  /** `out` as fairloom's error document: `{"error": {"kind", "message", "step"}}`. */
  static Map<String, Object> error(
      Map<String, Object> out, String kind, String message, Integer step) {
    Map<String, Object> error = Json.object();
    error.put("kind", kind);
    error.put("message", message);
    if (step != null) {
      error.put("step", step);
    }
    out.put("error", error);
    return out;
  }

  static String describe(Throwable e) {
    StringBuilder text = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (text.length() > 0) {
        text.append(": ");
      }
      text.append(t.getClass().getSimpleName());
      if (t.getMessage() != null) {
        text.append(" ").append(t.getMessage());
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return text.toString();
  }

  private void step(int index, JsonNode step) throws Exception {
    if (!step.has("observe") && !step.has("reload") && !step.has("move")) {
      // The scenario format shows a reload's outcome only on an observation right after it.
      pendingReload = null;
    }
    if (step.has("advance_ms")) {
      clock.advance(step.get("advance_ms").asLong());
    } else if (step.has("update")) {
      update();
    } else if (step.has("heartbeat")) {
      long rounds = Json.number(step, "rounds", 1);
      List<String> names = Json.names(step.get("heartbeat"), new ArrayList<>(nodes.keySet()));
      for (long r = 0; r < rounds; r++) {
        for (String name : names) {
          heartbeat(name);
        }
      }
    } else if (step.has("add_node")) {
      addNode(step.get("add_node"));
    } else if (step.has("remove_node")) {
      removeNode(step.get("remove_node").asText());
    } else if (step.has("submit")) {
      submit(step.get("submit"));
    } else if (step.has("ask")) {
      ask(step.get("ask"));
    } else if (step.has("complete")) {
      complete(step.get("complete"), false);
    } else if (step.has("release")) {
      complete(step.get("release"), true);
    } else if (step.has("finish")) {
      finish(app(step.get("finish").asText()));
    } else if (step.has("move")) {
      String rejection = move(step.get("move"));
      recordReload(index, rejection);
    } else if (step.has("place")) {
      place(step.get("place"));
    } else if (step.has("reload")) {
      String rejection = reload(step.get("reload"));
      recordReload(index, rejection);
    } else if (step.has("observe")) {
      observe(step.get("observe").asText());
    } else {
      throw new StepError("unknown step " + step);
    }
  }

  private void recordReload(int index, String rejection) {
    String result = rejection == null ? "applied" : "rejected: " + rejection;
    Map<String, Object> entry = Json.object();
    entry.put("step", index);
    entry.put("result", result);
    reloads.add(entry);
    pendingReload = result;
  }

  App app(String name) {
    App app = apps.get(name);
    if (app == null) {
      throw new StepError("unknown application " + name);
    }
    return app;
  }

  RMNodeImpl node(String name) {
    RMNodeImpl node = nodes.get(name);
    if (node == null) {
      throw new StepError("unknown node " + name);
    }
    return node;
  }

  void addNode(JsonNode spec) {
    String name = spec.get("name").asText();
    String rack = Json.text(spec, "rack", "/default-rack");
    if (spec.has("label") && !spec.get("label").isNull()) {
      addNodeLabel(name, spec.get("label").asText());
    }
    int port = nodePort++;
    NodeId id = NodeId.newInstance(name, port);
    RMNodeImpl node =
        new RMNodeImpl(
            id, context, name, port, 8042, new NodeBase(name, rack), Json.resource(spec.get("resource")),
            "3.4.2");
    context.getRMNodes().put(id, node);
    nodes.put(name, node);
    // Registration as ResourceTrackerService does it: the node's own state machine goes RUNNING
    // (the Capacity Scheduler refuses to commit a container on a node in any other state) and
    // sends NodeAddedSchedulerEvent, which reaches the scheduler with the other recorded events.
    node.handle(new RMNodeStartedEvent(id, null, null, null));
    deliverSchedulerEvents();
  }

  /** Puts a node in a partition before it registers (Capacity Scheduler). */
  void addNodeLabel(String node, String label) {
    throw new Unsupported("node labels under this scheduler");
  }

  private void removeNode(String name) {
    RMNodeImpl node = node(name);
    scheduler().handle(new NodeRemovedSchedulerEvent(node));
    nodes.remove(name);
    context.getRMNodes().remove(node.getNodeID());
    pullAndLaunch();
  }

  private void heartbeat(String name) {
    RMNodeImpl node = node(name);
    scheduler().handle(new NodeUpdateSchedulerEvent(node));
    deliverSchedulerEvents();
    pullAndLaunch();
  }

  /**
   * The scenario's node managers act at once: a container the RM ended (a kill by preemption, a
   * finished application) is reported ended by its NM straight away. YARN keeps such a
   * container's room on its node until that report (SchedulerNode.releaseContainer waits for a
   * container launched on the node), which a real NM sends at its next heartbeat.
   */
  void nodeManagersReport() {
    for (RMNodeImpl node : nodes.values()) {
      SchedulerNode sn = scheduler().getSchedulerNode(node.getNodeID());
      if (sn == null) {
        continue;
      }
      if (sn.getReservedContainer() != null) {
        stampCreation(sn.getReservedContainer());
      }
      for (RMContainer c : sn.getCopiedListOfRunningContainers()) {
        if (Views.ended(c)) {
          sn.releaseContainer(c.getContainerId(), true);
        }
      }
    }
  }

  private final java.util.Set<RMContainer> stamped =
      java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

  /**
   * RMContainerImpl takes its creation time from the wall clock, while the scheduler and the
   * preemption policy read the scenario's clock (in a real RM both are the wall clock). A
   * container new to the oracle gets the scenario's time, so that waits measured from it, such
   * as the queue-priority selector's reserved-container delay, run on one clock.
   */
  void stampCreation(RMContainer c) {
    if (!stamped.add(c)) {
      return;
    }
    try {
      java.lang.reflect.Field field = RMContainerImpl.class.getDeclaredField("creationTime");
      field.setAccessible(true);
      field.setLong(c, clock.getTime());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("RMContainerImpl.creationTime: " + e, e);
    }
  }

  /** Events the scheduler sent to itself through the dispatcher (kills, preemption marks). */
  void deliverSchedulerEvents() {
    for (int round = 0; round < 100; round++) {
      List<Event<?>> events = dispatcher.drain();
      boolean any = false;
      for (Event<?> event : events) {
        if (event instanceof RMAppEvent
            && ((RMAppEvent) event).getType() == RMAppEventType.APP_REJECTED) {
          App app = byId(((RMAppEvent) event).getApplicationId());
          if (app != null && app.rejection == null) {
            app.rejection = ((RMAppEvent) event).getDiagnosticMsg();
          }
        } else if (event instanceof SchedulerEvent) {
          scheduler().handle((SchedulerEvent) event);
          any = true;
        }
      }
      if (!any) {
        return;
      }
    }
  }

  App byId(ApplicationId id) {
    for (App app : apps.values()) {
      if (app.id.equals(id)) {
        return app;
      }
    }
    return null;
  }

  /**
   * What the AM and NM do after a heartbeat: the AM pulls its new containers (ACQUIRED) and the
   * NM starts them (RUNNING), so that containers run at once as the scenario format says. A
   * managed application's first container is its AM container, as RMAppAttemptImpl marks it.
   */
  void pullAndLaunch() {
    for (App app : apps.values()) {
      SchedulerApplicationAttempt attempt = scheduler().getApplicationAttempt(app.attempt);
      if (attempt == null) {
        continue;
      }
      List<Container> fresh = new ArrayList<>(attempt.pullNewlyAllocatedContainers());
      Collections.sort(fresh, (a, b) -> a.getId().compareTo(b.getId()));
      for (Container container : fresh) {
        RMContainer rmContainer = attempt.getRMContainer(container.getId());
        if (rmContainer == null) {
          continue;
        }
        if (app.am != null && app.master == null) {
          app.master = container;
          ((RMContainerImpl) rmContainer).setAMContainer(true);
        }
        stampCreation(rmContainer);
        app.containers.put(containerName(app, container.getId()), rmContainer);
        rmContainer.handle(new RMContainerEvent(container.getId(), RMContainerEventType.LAUNCHED));
        // The NM's report that it runs (in YARN, at the node's next heartbeat).
        SchedulerNode sn = scheduler().getSchedulerNode(container.getNodeId());
        if (sn != null) {
          sn.containerStarted(container.getId());
        }
      }
    }
  }

  /** The scenario's `APP/N` name of a new container. */
  String containerName(App app, ContainerId id) {
    return app.name + "/" + (++app.named);
  }

  private void submit(JsonNode body) throws Exception {
    String name = body.get("app").asText();
    if (apps.containsKey(name)) {
      throw new StepError("application " + name + " submitted twice");
    }
    ApplicationId id = ApplicationId.newInstance(0, apps.size() + 1);
    JsonNode amNode = body.get("am");
    Resource am = amNode == null || amNode.isNull() ? null : Json.resource(amNode);
    if (am != null) {
      // RMAppManager.validateAndCreateResourceRequest normalises the AM's request.
      am = scheduler().getNormalizedResource(am, scheduler().getMaximumResourceCapability());
    }
    App app = new App(name, id, Json.text(body, "user", "user"), am);
    apps.put(name, app);
    appsByAttempt.put(app.attempt, app);

    ApplicationSubmissionContext asc = Records.newRecord(ApplicationSubmissionContext.class);
    asc.setApplicationId(id);
    asc.setApplicationName(name);
    asc.setQueue(Json.text(body, "queue", "default"));
    asc.setUnmanagedAM(am == null);
    asc.setPriority(Priority.newInstance((int) Json.number(body, "priority", 0)));
    String label = Json.text(body, "node_label", null);
    if (label != null) {
      asc.setNodeLabelExpression(label);
    }
    List<ResourceRequest> amRequests = null;
    if (am != null) {
      ResourceRequest request =
          ResourceRequest.newInstance(Priority.newInstance(0), ResourceRequest.ANY, am, 1);
      if (label != null) {
        request.setNodeLabelExpression(label);
      }
      amRequests = Collections.singletonList(request);
      asc.setAMContainerResourceRequests(amRequests);
    }
    context.getRMApps().put(id, AppStubs.rmApp(context, app, asc, amRequests));

    try {
      app.rejection = submit(app, asc, body);
    } catch (Exception e) {
      // What the RM's submitApplication would throw back to the client.
      app.rejection = describe(e);
    }
    deliverSchedulerEvents();
    if (app.rejection != null) {
      return;
    }
    scheduler().handle(new AppAttemptAddedSchedulerEvent(app.attempt, false));
    deliverSchedulerEvents();
    attemptAdded(app);
    if (amRequests != null) {
      // RMAppAttemptImpl's ScheduleTransition: the AM container's ask, priority 0 on *.
      allocate(app, new ArrayList<>(amRequests), Collections.emptyList());
    }
  }

  /** After the attempt was added: what a scheduler needs pinned to the scenario's clock. */
  void attemptAdded(App app) throws Exception {}

  /** Hands the AddApp event to the scheduler and collects a rejection from the dispatcher. */
  String addApp(App app, ApplicationSubmissionContext asc, ApplicationPlacementContext placement) {
    scheduler()
        .handle(new AppAddedSchedulerEvent(app.user, asc, false, asc.getPriority(), placement));
    deliverSchedulerEvents();
    return app.rejection;
  }



  private void ask(JsonNode body) {
    App app = app(body.get("app").asText());
    if (!app.accepted() || app.finished) {
      throw new StepError("ask for application " + app.name + " that is not live");
    }
    List<ResourceRequest> asks = new ArrayList<>();
    for (JsonNode r : body.get("requests")) {
      ResourceRequest request =
          ResourceRequest.newInstance(
              Priority.newInstance((int) r.get("priority").asLong()),
              r.get("resource_name").asText(),
              Json.resource(r.get("capability")),
              (int) r.get("num_containers").asLong(),
              Json.flag(r, "relax_locality", true));
      String label = Json.text(r, "node_label", null);
      if (label != null) {
        request.setNodeLabelExpression(label);
      }
      asks.add(request);
    }
    allocate(app, asks, Collections.emptyList());
  }

  void allocate(App app, List<ResourceRequest> asks, List<ContainerId> releases) {
    scheduler()
        .allocate(app.attempt, asks, null, releases, null, null, new ContainerUpdates());
  }

  /** Live containers of an application, in allocation order. */
  List<Map.Entry<String, RMContainer>> live(App app) {
    List<Map.Entry<String, RMContainer>> live = new ArrayList<>();
    for (Map.Entry<String, RMContainer> entry : app.containers.entrySet()) {
      if (!Views.ended(entry.getValue())) {
        live.add(entry);
      }
    }
    return live;
  }

  private void complete(JsonNode body, boolean release) {
    List<Map.Entry<String, RMContainer>> chosen = new ArrayList<>();
    if (body.has("containers")) {
      for (JsonNode n : body.get("containers")) {
        String name = n.asText();
        int slash = name.lastIndexOf('/');
        if (slash < 0) {
          throw new StepError("container name " + name + " is not APP/N");
        }
        App app = app(name.substring(0, slash));
        RMContainer c = app.containers.get(name);
        if (c == null || Views.ended(c)) {
          throw new StepError("container " + name + " is not live");
        }
        chosen.add(Map.entry(name, c));
      }
    } else {
      App app = app(body.get("app").asText());
      long count = Json.number(body, "count", 1);
      String onNode = Json.text(body, "node", null);
      List<Map.Entry<String, RMContainer>> live = live(app);
      for (int i = live.size() - 1; i >= 0 && chosen.size() < count; i--) {
        RMContainer c = live.get(i).getValue();
        if (c.isAMContainer() && app.master != null && c.getContainerId().equals(app.master.getId())) {
          continue;
        }
        if (onNode != null && !c.getAllocatedNode().getHost().equals(onNode)) {
          continue;
        }
        chosen.add(live.get(i));
      }
      if (chosen.size() < count) {
        throw new StepError("application " + app.name + " has too few containers for count " + count);
      }
    }
    int exit = (int) Json.number(body, "exit_status", 0);
    for (Map.Entry<String, RMContainer> entry : chosen) {
      RMContainer c = entry.getValue();
      if (release) {
        App app = appsByAttempt.get(c.getApplicationAttemptId());
        allocate(app, Collections.emptyList(), Collections.singletonList(c.getContainerId()));
      } else {
        scheduler()
            .completedContainer(
                c,
                ContainerStatus.newInstance(c.getContainerId(), ContainerState.COMPLETE, "", exit),
                RMContainerEventType.FINISHED);
      }
      deliverSchedulerEvents();
    }
  }

  private void finish(App app) {
    if (!app.accepted() || app.finished) {
      throw new StepError("finish of application " + app.name + " that is not live");
    }
    // Its leaf, for the reports after it has gone (it may never have been observed live).
    SchedulerApplicationAttempt attempt = scheduler().getApplicationAttempt(app.attempt);
    if (attempt != null) {
      app.queue = queuePath(attempt);
    }
    scheduler()
        .handle(new AppAttemptRemovedSchedulerEvent(app.attempt, RMAppAttemptState.FINISHED, false));
    scheduler().handle(new AppRemovedSchedulerEvent(app.id, RMAppState.FINISHED));
    app.finished = true;
  }

  private String move(JsonNode body) {
    App app = app(body.get("app").asText());
    String queue = body.get("queue").asText();
    try {
      if (!app.accepted() || app.finished) {
        return "application " + app.name + " is not running";
      }
      scheduler().preValidateMoveApplication(app.id, queue);
      scheduler().moveApplication(app.id, queue);
      return null;
    } catch (Exception e) {
      return e.getMessage();
    }
  }

  /**
   * Running containers learnt from a node, as after an RM restart: YARN's work-preserving
   * recovery path (recoverContainersOnNode), which checks no limit and no free room.
   */
  void place(JsonNode body) {
    if (Json.flag(body, "reserved", false)) {
      placeReservation(body);
      return;
    }
    App app = app(body.get("app").asText());
    RMNodeImpl node = node(body.get("node").asText());
    SchedulerApplicationAttempt attempt = scheduler().getApplicationAttempt(app.attempt);
    if (attempt == null) {
      throw new StepError("place for application " + app.name + " that is not live");
    }
    Resource capability = Json.resource(body.get("capability"));
    Priority priority = Priority.newInstance((int) Json.number(body, "priority", 0));
    boolean am = Json.flag(body, "am", false);
    String label = Json.text(body, "node_label", null);
    long count = Json.number(body, "count", 1);
    if (app.am != null && app.master == null) {
      // A recovered attempt has no AM ask outstanding; take back the one made at submission.
      allocate(
          app,
          Collections.singletonList(
              ResourceRequest.newInstance(Priority.newInstance(0), ResourceRequest.ANY, app.am, 0)),
          Collections.emptyList());
    }
    for (long i = 0; i < count; i++) {
      ContainerId id = ContainerId.newContainerId(app.attempt, attempt.getNewContainerId());
      if (am && i == 0) {
        // Recovery marks the container the attempt names as its master as the AM container.
        app.master =
            Container.newInstance(id, node.getNodeID(), node.getHttpAddress(), capability, priority, null);
      }
      NMContainerStatus status =
          NMContainerStatus.newInstance(
              id, 0, ContainerState.RUNNING, capability, "", 0, priority, clock.getTime(),
              label == null ? "" : label, ExecutionType.GUARANTEED, -1);
      scheduler().recoverContainersOnNode(Collections.singletonList(status), node);
      RMContainer rmContainer = attempt.getRMContainer(id);
      if (rmContainer == null) {
        throw new StepError("YARN did not recover placed container " + id);
      }
      if (am) {
        // Hadoop's preemption tests flag every such container (RMContainerImpl.setAMContainer).
        ((RMContainerImpl) rmContainer).setAMContainer(true);
      }
      app.containers.put(containerName(app, id), rmContainer);
    }
  }

  void placeReservation(JsonNode body) {
    throw new Unsupported("a placed reservation (YARN has no public path to make one)");
  }

  private void observe(String label) throws Exception {
    Map<String, Object> observation = Json.object();
    observation.put("label", label);
    observation.put("time_ms", clock.getTime());
    observation.put("queues", observeQueues());
    Map<String, Object> appsOut = Json.object();
    for (App app : apps.values()) {
      countPreempted(app);
      appsOut.put(app.name, observeApp(app));
    }
    observation.put("apps", appsOut);
    Map<String, Object> nodesOut = Json.object();
    for (Map.Entry<String, RMNodeImpl> entry : nodes.entrySet()) {
      SchedulerNode sn = scheduler().getSchedulerNode(entry.getValue().getNodeID());
      nodesOut.put(entry.getKey(), observeNode(entry.getValue(), sn));
    }
    observation.put("nodes", nodesOut);
    if (pendingReload != null) {
      observation.put("reload", pendingReload);
      pendingReload = null;
    }
    observations.add(observation);
  }



  /** Preempted = containers of the app that ended with YARN's PREEMPTED exit status. */
  void countPreempted(App app) {
    int count = 0;
    for (RMContainer c : app.containers.values()) {
      if (Views.ended(c) && c.getContainerExitStatus() == ContainerExitStatus.PREEMPTED) {
        count++;
      }
    }
    app.preempted = count;
  }

  /**
   * The fields both schedulers report for an application: `attempt` is YARN's, null once the
   * application finished or when it was rejected; `queuePath` its leaf's path when it is live.
   */
  Map<String, Object> observeCommon(
      App app, SchedulerApplicationAttempt attempt, String queuePath, boolean runnable, boolean amRunning) {
    Map<String, Object> o = Json.object();
    if (queuePath != null) {
      app.queue = queuePath;
    }
    o.put("queue", app.accepted() ? app.queue : null);
    o.put("state", state(app, runnable, amRunning));
    o.put("rejection", app.rejection);
    o.put("runnable", runnable);
    o.put("am_running", amRunning);
    o.put("live_containers", attempt == null ? 0 : attempt.getLiveContainers().size());
    o.put("preempted", app.preempted);
    return o;
  }

  /**
   * An unmanaged-AM application is RUNNING once its attempt has been schedulable, and stays so
   * when a move or a refresh makes it wait again (RMApp has no way back to ACCEPTED); checked
   * after every step so that a short spell between observations counts.
   */
  private void noteUnmanagedRunning() throws Exception {
    for (App app : apps.values()) {
      if (app.am == null && !app.running && app.accepted() && !app.finished) {
        observeApp(app);
      }
    }
  }

  /** The state fairloom reports, from what the RM would know. */
  String state(App app, boolean runnable, boolean amRunning) {
    if (app.rejection != null) return "rejected";
    if (app.finished) return "finished";
    if (app.am == null) {
      app.running |= runnable;
      return app.running ? "running" : "accepted";
    }
    return amRunning ? "running" : "accepted";
  }



  /** Names the app holding a reservation on a node, or null. */
  Object reservedFor(SchedulerNode node) {
    if (node == null || node.getReservedContainer() == null) {
      return null;
    }
    App app = appsByAttempt.get(node.getReservedContainer().getApplicationAttemptId());
    return app == null ? null : app.name;
  }
}
