package dev.fairloom.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/** Scenario-wide settings every driver applies before building its scheduler. */
final class Scenarios {
  private Scenarios() {}

  /** Resource types and groups from the scenario, then Hadoop's static state reset. */
  static void prepare(JsonNode doc, Configuration conf) {
    JsonNode types = doc.get("resource_types");
    if (types != null && types.size() > 0) {
      List<String> names = new ArrayList<>();
      types.forEach(t -> names.add(t.asText()));
      conf.set("yarn.resource-types", String.join(",", names));
    }
    Map<String, List<String>> groups = new HashMap<>();
    JsonNode groupsDoc = doc.get("groups");
    if (groupsDoc != null) {
      groupsDoc
          .fields()
          .forEachRemaining(
              e -> {
                List<String> list = new ArrayList<>();
                e.getValue().forEach(g -> list.add(g.asText()));
                groups.put(e.getKey(), list);
              });
    }
    ScenarioGroups.set(groups);
    Statics.reset(conf);
  }
}
