package dev.fairloom.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.File;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The YARN oracle: plays scenario files through Hadoop's own schedulers, all in this one JVM, and
 * prints one JSON line per file: {"file": path, "output": what `fairloom scenario run` prints}.
 *
 * <p>Usage: yarn-oracle FILE... (or `@LIST`, a file naming one scenario per line).
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    ObjectMapper mapper = new ObjectMapper();
    mapper.configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
    // Hadoop prints to stdout in places; only the oracle's lines go there.
    System.setOut(System.err);
    for (String file : files(args)) {
      // Weakly held Hadoop caches must not carry one scenario's objects into the next at the
      // collector's whim: each file starts after a collection.
      System.gc();
      Map<String, Object> line = Json.object();
      line.put("file", file);
      line.put("output", runFile(mapper, file));
      out.println(mapper.writeValueAsString(line));
    }
    out.flush();
    // Hadoop may leave non-daemon threads (metrics, timers) behind.
    System.exit(0);
  }

  private static List<String> files(String[] args) throws java.io.IOException {
    List<String> files = new ArrayList<>();
    for (String arg : args) {
      if (arg.startsWith("@")) {
        for (String line : java.nio.file.Files.readAllLines(new File(arg.substring(1)).toPath())) {
          if (!line.isBlank()) {
            files.add(line.trim());
          }
        }
      } else {
        files.add(arg);
      }
    }
    return files;
  }

  static Object runFile(ObjectMapper mapper, String file) {
    JsonNode doc;
    try {
      doc = mapper.readTree(new File(file));
    } catch (Exception e) {
      return Driver.error(Json.object(), "document", Driver.describe(e), null);
    }
    String scheduler = Json.text(doc, "scheduler", "fair");
    Driver driver;
    switch (scheduler) {
      case "fair":
        driver = new FairDriver(doc);
        break;
      case "capacity":
        driver = new CapacityDriver(doc);
        break;
      default:
        Map<String, Object> out = Json.object();
        out.put("name", Json.text(doc, "name", ""));
        return Driver.error(out, "unsupported", "scheduler " + scheduler, null);
    }
    return driver.run();
  }
}
