package io.reactivelocks.spring.boot;

import java.util.function.Supplier;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Turns a store option that a {@code reactive-locks.*} property set and the store's builder refused into Spring Boot's
 * {@link InvalidConfigurationPropertyValueException}, whose failure analysis names the property and its origin at the
 * top of the start-up failure report (instead of an {@code IllegalArgumentException} several bean creations deep).
 */
final class InvalidProperty {

    private InvalidProperty() {
    }

    /**
     * @param property the property, under {@code reactive-locks.} ({@code "postgres.table"})
     * @param value    its value
     * @param build    applies the value to a store's builder
     * @param <T>      what {@code build} returns
     * @return what {@code build} returns
     * @throws InvalidConfigurationPropertyValueException naming the property when {@code build} refuses the value
     */
    static <T> T check(String property, Object value, Supplier<T> build) {
        try {
            return build.get();
        } catch (IllegalArgumentException e) {
            throw invalid(property, value, e.getMessage());
        }
    }

    /**
     * @param property the property, under {@code reactive-locks.}
     * @param value    its value
     * @param reason   why it is wrong, and what to do instead
     * @return the exception to throw
     */
    static InvalidConfigurationPropertyValueException invalid(String property, Object value, String reason) {
        return new InvalidConfigurationPropertyValueException(ReactiveLocksProperties.PREFIX + "." + property, value, reason);
    }
}
