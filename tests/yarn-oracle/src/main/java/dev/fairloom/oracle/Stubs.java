package dev.fairloom.oracle;

import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Stand-ins for the RM's application objects (RMApp, RMAppAttempt), which the schedulers read but
 * the oracle does not run: a method named in `answers` returns its answer; any other returns an
 * empty collection, zero, false or null. This replaces the Mockito stubs Hadoop's own tests use.
 */
final class Stubs {
  private Stubs() {}

  static <T> T of(Class<T> type, Map<String, Supplier<Object>> answers) {
    Object proxy =
        Proxy.newProxyInstance(
            Stubs.class.getClassLoader(),
            new Class<?>[] {type},
            (self, method, args) -> {
              String name = method.getName();
              Supplier<Object> answer = answers.get(name);
              if (answer != null) {
                return answer.get();
              }
              switch (name) {
                case "equals":
                  return self == args[0];
                case "hashCode":
                  return System.identityHashCode(self);
                case "toString":
                  return type.getSimpleName() + " stub";
                default:
                  return emptyValue(method.getReturnType());
              }
            });
    return type.cast(proxy);
  }

  private static Object emptyValue(Class<?> type) {
    if (type == boolean.class) return false;
    if (type == int.class) return 0;
    if (type == long.class) return 0L;
    if (type == float.class) return 0f;
    if (type == double.class) return 0d;
    if (type == Map.class) return Collections.emptyMap();
    if (type == Set.class) return Collections.emptySet();
    if (type == List.class) return Collections.emptyList();
    return null;
  }
}
