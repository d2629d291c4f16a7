package dev.fairloom.oracle;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.security.GroupMappingServiceProvider;

/**
 * Hadoop's group mapping, fed from the scenario's `groups`: a user the scenario does not list has
 * one group named like the user, as the scenario format says.
 */
public final class ScenarioGroups implements GroupMappingServiceProvider {
  private static volatile Map<String, List<String>> groups = new HashMap<>();

  static void set(Map<String, List<String>> byUser) {
    groups = byUser;
  }

  @Override
  public List<String> getGroups(String user) {
    List<String> listed = groups.get(user);
    return listed == null ? Collections.singletonList(user) : new ArrayList<>(listed);
  }

  @Override
  public void cacheGroupsRefresh() {}

  @Override
  public void cacheGroupsAdd(List<String> added) {}

  @Override
  public Set<String> getGroupsSet(String user) {
    return new java.util.LinkedHashSet<>(getGroups(user));
  }
}
