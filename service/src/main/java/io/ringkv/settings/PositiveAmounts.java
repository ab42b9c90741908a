package io.ringkv.settings;

import java.time.Duration;

import org.springframework.util.unit.DataSize;

import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.PositiveOrZero;

/**
 * Bean Validation's {@link Positive} and {@link PositiveOrZero} for durations and data sizes, so
 * that every setting says what it must be the same way. Registered for those constraints through
 * {@code META-INF/services/jakarta.validation.ConstraintValidator}.
 */
public final class PositiveAmounts {

    private PositiveAmounts() {
    }

    /** The node works in whole milliseconds: less than one is no time at all. */
    public static final class PositiveDuration implements ConstraintValidator<Positive, Duration> {
        @Override
        public boolean isValid(Duration value, ConstraintValidatorContext context) {
            return value == null || value.toMillis() > 0;
        }
    }

    public static final class NotNegativeDuration implements ConstraintValidator<PositiveOrZero, Duration> {
        @Override
        public boolean isValid(Duration value, ConstraintValidatorContext context) {
            return value == null || !value.isNegative();
        }
    }

    public static final class PositiveDataSize implements ConstraintValidator<Positive, DataSize> {
        @Override
        public boolean isValid(DataSize value, ConstraintValidatorContext context) {
            return value == null || value.toBytes() > 0;
        }
    }
}
