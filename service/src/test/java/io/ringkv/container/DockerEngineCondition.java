package io.ringkv.container;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Skips a container test class, with a message saying why, when no Docker engine answers; except
 * in CI ({@code CI=true}), where the tests run anyway and fail in {@link RingkvImage#name()}.
 */
public final class DockerEngineCondition implements ExecutionCondition {

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (RingkvImage.dockerAvailable()) {
            return ConditionEvaluationResult.enabled("a Docker engine answers");
        }
        if (RingkvImage.ci()) {
            return ConditionEvaluationResult.enabled("no Docker engine, but CI=true: the container tests must run, and fail");
        }
        System.out.println("[container tests] " + RingkvImage.SKIPPED);
        return ConditionEvaluationResult.disabled(RingkvImage.SKIPPED);
    }
}
