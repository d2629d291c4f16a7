package dev.fairloom.oracle;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.security.Groups;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.yarn.security.YarnAuthorizationProvider;
import org.apache.hadoop.yarn.server.resourcemanager.ClusterMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

/**
 * Hadoop keeps scheduler state in static singletons (queue metrics by queue name, the ACL
 * authorizer, the group mapping, the resource-type table). Many scenarios run in one JVM, so each
 * starts from a clean slate, as Hadoop's own test tear-downs do.
 */
final class Statics {
  private Statics() {}

  static void reset(Configuration conf) {
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.shutdown();
    // Tolerates the metric sources each new scheduler registers under the same names.
    DefaultMetricsSystem.setMiniClusterMode(true);
    ClusterMetrics.destroy();
    YarnAuthorizationProvider.destroy();
    Groups.getUserToGroupsMappingServiceWithLoadedConfiguration(conf);
    ResourceUtils.resetResourceTypes(conf);
    // Container tokens name their node; scenario hosts (n1, ...) do not resolve.
    SecurityUtil.setTokenServiceUseIp(false);
  }
}
