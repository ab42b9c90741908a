package io.ringkv.settings;

import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.nio.file.Files;
import java.nio.file.Path;

import org.hibernate.validator.constraintvalidation.HibernateConstraintValidatorContext;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;

/**
 * A directory the node can write to, created if it is missing: proved by writing a file there,
 * since permissions alone do not tell (a read-only mount, a full disk).
 */
@Constraint(validatedBy = WritableDirectory.Check.class)
@Target({ElementType.FIELD, ElementType.PARAMETER})
@Retention(RetentionPolicy.RUNTIME)
public @interface WritableDirectory {

    String message() default "'${validatedValue}' is not a writable directory ({problem})";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    final class Check implements ConstraintValidator<WritableDirectory, Path> {
        @Override
        public boolean isValid(Path directory, ConstraintValidatorContext context) {
            try {
                Files.createDirectories(directory);
                Files.delete(Files.createTempFile(directory, ".write-check", ".tmp"));
                return true;
            } catch (IOException | SecurityException e) {
                context.unwrap(HibernateConstraintValidatorContext.class).addMessageParameter("problem", e.getMessage());
                return false;
            }
        }
    }
}
