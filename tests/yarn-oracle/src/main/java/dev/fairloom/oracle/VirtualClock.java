package dev.fairloom.oracle;

import org.apache.hadoop.yarn.util.Clock;

/** The scenario's clock: starts at 0 and moves only with `advance_ms`. */
final class VirtualClock implements Clock {
  private long now;

  @Override
  public long getTime() {
    return now;
  }

  void advance(long ms) {
    now += ms;
  }
}
