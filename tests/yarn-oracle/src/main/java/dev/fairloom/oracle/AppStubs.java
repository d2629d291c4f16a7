package dev.fairloom.oracle;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.RMContextImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptMetrics;

/** The RM's application objects the schedulers read, as stubs over a scenario application. */
final class AppStubs {
  private AppStubs() {}

  static RMApp rmApp(
      RMContextImpl context, Driver.App app, ApplicationSubmissionContext asc, List<ResourceRequest> amRequests) {
    RMAppAttemptMetrics metrics = new RMAppAttemptMetrics(app.attempt, context);
    Map<String, Supplier<Object>> attemptAnswers = new HashMap<>();
    attemptAnswers.put("getAppAttemptId", () -> app.attempt);
    attemptAnswers.put("getMasterContainer", () -> app.master);
    attemptAnswers.put("getRMAppAttemptMetrics", () -> metrics);
    attemptAnswers.put("getSubmissionContext", () -> asc);
    RMAppAttempt attempt = Stubs.of(RMAppAttempt.class, attemptAnswers);

    Map<String, Supplier<Object>> answers = new HashMap<>();
    answers.put("getApplicationId", () -> app.id);
    answers.put("getApplicationSubmissionContext", () -> asc);
    answers.put("getAMResourceRequests", () -> amRequests);
    answers.put("getCurrentAppAttempt", () -> attempt);
    answers.put("getRMAppAttempt", () -> attempt);
    answers.put("getUser", () -> app.user);
    answers.put("getQueue", asc::getQueue);
    answers.put("getName", () -> app.name);
    answers.put("getApplicationPriority", asc::getPriority);
    answers.put("getAppNodeLabelExpression", asc::getNodeLabelExpression);
    answers.put("getAmNodeLabelExpression", asc::getNodeLabelExpression);
    answers.put("getState", () -> RMAppState.RUNNING);
    answers.put("getApplicationType", () -> "YARN");
    return Stubs.of(RMApp.class, answers);
  }}
