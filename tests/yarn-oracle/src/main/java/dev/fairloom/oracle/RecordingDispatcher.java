package dev.fairloom.oracle;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.yarn.event.Dispatcher;
import org.apache.hadoop.yarn.event.Event;
import org.apache.hadoop.yarn.event.EventHandler;

/**
 * The RM's dispatcher, without its thread: every event the scheduler (or a container's state
 * machine) sends is recorded, and the driver hands the scheduler's own events back to it after
 * each step, on the driver's thread, so one scenario plays the same way every run.
 */
final class RecordingDispatcher implements Dispatcher {
  private final List<Event<?>> events = new ArrayList<>();

  @Override
  @SuppressWarnings({"rawtypes", "unchecked"})
  public EventHandler<Event> getEventHandler() {
    return event -> events.add(event);
  }

  @Override
  @SuppressWarnings("rawtypes")
  public void register(Class<? extends Enum> eventType, EventHandler handler) {}

  /** Takes every event recorded so far, oldest first. */
  List<Event<?>> drain() {
    List<Event<?>> taken = new ArrayList<>(events);
    events.clear();
    return taken;
  }
}
