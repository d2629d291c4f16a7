package dev.fairloom.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

/** Small readers of scenario JSON and writers of observation JSON (sorted keys, as fairloom's). */
final class Json {
  private Json() {}

  static Map<String, Object> object() {
    return new TreeMap<>();
  }

  static String text(JsonNode node, String key, String fallback) {
    JsonNode value = node == null ? null : node.get(key);
    return value == null || value.isNull() ? fallback : value.asText();
  }

  static long number(JsonNode node, String key, long fallback) {
    JsonNode value = node == null ? null : node.get(key);
    return value == null || value.isNull() ? fallback : value.asLong();
  }

  static boolean flag(JsonNode node, String key, boolean fallback) {
    JsonNode value = node == null ? null : node.get(key);
    return value == null || value.isNull() ? fallback : value.asBoolean();
  }

  /** A scenario value as a property string: numbers and booleans as written. */
  static String property(JsonNode value) {
    return value.isTextual() ? value.asText() : value.toString();
  }

  /** Node names of a `heartbeat` value: one name, a list, or "all". */
  static List<String> names(JsonNode value, List<String> all) {
    List<String> names = new ArrayList<>();
    if (value.isArray()) {
      value.forEach(n -> names.add(n.asText()));
    } else if ("all".equals(value.asText())) {
      names.addAll(all);
    } else {
      names.add(value.asText());
    }
    return names;
  }

  /** A scenario resource (`{"memory-mb": 1024, "vcores": 1, ...}`), absent types 0. */
  static Resource resource(JsonNode node) {
    Resource resource = Resource.newInstance(0L, 0);
    if (node == null || node.isNull()) {
      return resource;
    }
    node.fields()
        .forEachRemaining(
            entry -> {
              String name = entry.getKey();
              long value = entry.getValue().asLong();
              if (name.equals("memory-mb")) {
                resource.setMemorySize(value);
              } else if (name.equals("vcores")) {
                resource.setVirtualCores((int) value);
              } else {
                resource.setResourceValue(name, value);
              }
            });
    return resource;
  }

  /** No limit: Long.MAX_VALUE in every type, as fairloom prints an unbounded resource. */
  static Map<String, Object> unbounded() {
    Map<String, Object> out = object();
    for (ResourceInformation info : ResourceUtils.getResourceTypesArray()) {
      out.put(info.getName(), Long.MAX_VALUE);
    }
    return out;
  }

  /** A resource as fairloom prints it: every known type, keyed by name. */
  static Map<String, Object> resource(Resource resource) {
    Map<String, Object> out = object();
    if (resource == null) {
      resource = Resource.newInstance(0L, 0);
    }
    for (ResourceInformation info : ResourceUtils.getResourceTypesArray()) {
      String name = info.getName();
      long value;
      try {
        value = resource.getResourceValue(name);
      } catch (RuntimeException absent) {
        value = 0;
      }
      out.put(name.equals("memory-mb") ? "memory-mb" : name, value);
    }
    return out;
  }
}
