package io.ringkv.settings;

import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.validation.FieldError;
import org.springframework.validation.ObjectError;


/**
 * Turns a bad setting, or an unknown one ({@link UnknownSettings}), into Spring Boot's short
 * start-up failure report instead of a stack trace, in the same words whether a constraint of
 * {@link RingkvProperties} found a bad one or the node did (an {@link InvalidSettingException}). Ahead of Spring Boot's own analyzers of binding failures,
 * which would report either as a failed binding of the whole {@code ringkv} object.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
public class InvalidSettingFailureAnalyzer implements FailureAnalyzer {

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof UnknownSettingException unknown) {
                return new FailureAnalysis(unknown.getMessage(),
                        "Correct or remove it (docs/configuration.md lists every setting) and start the node again.", unknown);
            }
            InvalidSettingException invalid = switch (cause) {
                case InvalidSettingException exception -> exception;
                case BindValidationException exception -> firstViolation(exception);
                default -> null;
            };
            if (invalid != null) {
                String variable = invalid.setting().toUpperCase().replace('.', '_').replace("-", "");
                return new FailureAnalysis(invalid.getMessage(),
                        "Correct " + invalid.setting() + " (or its environment variable, " + variable + ") and start the node again.",
                        invalid);
            }
        }
        return null;
    }

    /** The node stops at its first bad setting, as it does for those it checks itself. */
    private static InvalidSettingException firstViolation(BindValidationException exception) {
        ObjectError error = exception.getValidationErrors().getAllErrors().getFirst();
        String setting = error instanceof FieldError field
                ? field.getObjectName() + "." + DataObjectPropertyName.toDashedForm(field.getField())
                : error.getObjectName();
        return new InvalidSettingException(setting, error.getDefaultMessage());
    }
}
