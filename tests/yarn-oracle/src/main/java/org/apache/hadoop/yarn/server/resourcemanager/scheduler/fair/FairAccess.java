package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Timer;
import java.util.TimerTask;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.function.LongSupplier;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;

/**
 * The oracle's door into the Fair Scheduler's package-private parts: starvation, the preemption
 * marks, the AM limit, and the preemption thread's work done on the caller's thread with a
 * virtual timer. It calls Hadoop's own code; it copies none of it.
 */
public final class FairAccess {
  private FairAccess() {}

  /** java.util.Timer's place in FSPreemptionThread: tasks wait for the scenario's clock. */
  public static final class VirtualTimer extends Timer {
    private final LongSupplier clock;
    private final List<Map.Entry<Long, TimerTask>> due = new ArrayList<>();

    VirtualTimer(LongSupplier clock) {
      super(true);
      // The constructor started Timer's own thread; nothing is ever scheduled on it.
      super.cancel();
      this.clock = clock;
    }

    @Override
    public void schedule(TimerTask task, long delay) {
      due.add(Map.entry(clock.getAsLong() + delay, task));
    }

    /** Runs every task whose time has come, in the order they were scheduled. */
    void runDue() {
      long now = clock.getAsLong();
      Iterator<Map.Entry<Long, TimerTask>> it = due.iterator();
      List<TimerTask> ready = new ArrayList<>();
      while (it.hasNext()) {
        Map.Entry<Long, TimerTask> entry = it.next();
        if (entry.getKey() <= now) {
          ready.add(entry.getValue());
          it.remove();
        }
      }
      ready.forEach(TimerTask::run);
    }
  }

  /** Swaps the preemption thread's timer for a virtual one (when preemption is enabled). */
  public static void installVirtualTimer(FairScheduler scheduler, LongSupplier clock)
      throws ReflectiveOperationException {
    if (scheduler.preemptionThread == null) {
      return;
    }
    Field field = FSPreemptionThread.class.getDeclaredField("preemptionTimer");
    field.setAccessible(true);
    Timer old = (Timer) field.get(scheduler.preemptionThread);
    old.cancel();
    field.set(scheduler.preemptionThread, new VirtualTimer(clock));
  }

  /**
   * What FSPreemptionThread.run() does for each starved application, on this thread: take it,
   * pick and mark containers under the scheduler's read lock, then back off. Then the timer's
   * due kills run, so a wait before kill of 0 kills within the same update.
   */
  public static void preempt(FairScheduler scheduler) throws Exception {
    FSPreemptionThread thread = (FSPreemptionThread) scheduler.preemptionThread;
    if (thread == null || !scheduler.getContext().isPreemptionEnabled()) {
      return;
    }
    FSStarvedApps starved = scheduler.getContext().getStarvedApps();
    Field queueField = FSStarvedApps.class.getDeclaredField("appsToProcess");
    queueField.setAccessible(true);
    PriorityBlockingQueue<?> queue = (PriorityBlockingQueue<?>) queueField.get(starved);
    Method identify =
        FSPreemptionThread.class.getDeclaredMethod("identifyContainersToPreempt", FSAppAttempt.class);
    identify.setAccessible(true);
    Method preempt = FSPreemptionThread.class.getDeclaredMethod("preemptContainers", List.class);
    preempt.setAccessible(true);
    Field delayField = FSPreemptionThread.class.getDeclaredField("delayBeforeNextStarvationCheck");
    delayField.setAccessible(true);
    long delay = delayField.getLong(thread);
    while (!queue.isEmpty()) {
      FSAppAttempt app = starved.take();
      scheduler.getSchedulerReadLock().lock();
      try {
        @SuppressWarnings("unchecked")
        List<RMContainer> containers = (List<RMContainer>) identify.invoke(thread, app);
        preempt.invoke(thread, containers);
      } finally {
        scheduler.getSchedulerReadLock().unlock();
      }
      app.preemptionTriggered(delay);
    }
    // The real thread's next take() clears the app being processed.
    Field processing = FSStarvedApps.class.getDeclaredField("appBeingProcessed");
    processing.setAccessible(true);
    processing.set(starved, null);
    Field timerField = FSPreemptionThread.class.getDeclaredField("preemptionTimer");
    timerField.setAccessible(true);
    ((VirtualTimer) timerField.get(thread)).runDue();
  }

  /** Reloads the allocation file, throwing what the loader throws (reinitialize swallows it). */
  public static void reloadAllocations(FairScheduler scheduler) throws Exception {
    Field field = FairScheduler.class.getDeclaredField("allocsLoader");
    field.setAccessible(true);
    ((AllocationFileLoaderService) field.get(scheduler)).reloadAllocations();
  }

  public static Resource starvation(FSAppAttempt app) {
    return app.getStarvation();
  }

  public static int preemptionMarked(FSAppAttempt app) {
    return app.getPreemptionContainerIds().size();
  }

  public static Resource amLimit(FSLeafQueue queue) throws ReflectiveOperationException {
    Method method = FSLeafQueue.class.getDeclaredMethod("computeMaxAMResource");
    method.setAccessible(true);
    return (Resource) method.invoke(queue);
  }

  public static int nonRunnableApps(FSLeafQueue queue) {
    return queue.getNumNonRunnableApps();
  }

  public static Resource amUsage(FSLeafQueue queue) {
    return queue.getAmResourceUsage();
  }

  public static boolean runnable(FSAppAttempt app) {
    return ((FSLeafQueue) app.getQueue()).isRunnableApp(app);
  }
}
