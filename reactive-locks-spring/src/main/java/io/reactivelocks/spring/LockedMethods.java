package io.reactivelocks.spring;

import io.reactivelocks.window.WindowLock;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodClassKey;
import org.springframework.core.MethodParameter;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.ParserContext;
import org.springframework.expression.common.CompositeStringExpression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Finds, parses and checks the {@link Locked} and {@link ScheduledLock} methods of bean classes, once
 * per method: a method whose annotation is wrong (a return type that is not reactive, a name that does
 * not parse or refers to a variable the method does not define, a duration that does not parse) fails
 * its bean's creation with an {@link IllegalStateException} naming the method.
 */
final class LockedMethods {

    private static final Optional<LockedMethod> NONE = Optional.empty();
    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    /** The variables a method-based evaluation context defines for argument {@code i}: {@code #p<i>} and {@code #a<i>}. */
    private static final Pattern POSITIONAL = Pattern.compile("[ap]\\d{1,4}");

    private final Map<MethodClassKey, Optional<LockedMethod>> cache = new ConcurrentHashMap<>();
    private final Map<Method, LockedMethod> all = new ConcurrentHashMap<>();
    private volatile @Nullable ConfigurableBeanFactory beanFactory;
    private volatile String defaultWaitTimeout = LockingAdvisor.DEFAULT_WAIT_TIMEOUT;

    void setBeanFactory(@Nullable ConfigurableBeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    void setDefaultWaitTimeout(String defaultWaitTimeout) {
        this.defaultWaitTimeout = defaultWaitTimeout;
    }

    /**
     * Checks every annotated method of a class.
     *
     * @return whether the class has one
     */
    boolean hasLockedMethods(Class<?> targetClass) {
        if (targetClass.getName().startsWith("java.") || targetClass.getName().startsWith("org.springframework.")) {
            return false;
        }
        boolean[] found = {false};
        ReflectionUtils.doWithMethods(targetClass, m -> {
            if (find(m, targetClass) != null) {
                found[0] = true;
            }
        });
        return found[0];
    }

    /** @return the locked method that a call of {@code method} on an instance of {@code targetClass} is, or null */
    @Nullable LockedMethod find(Method method, @Nullable Class<?> targetClass) {
        if (method.getDeclaringClass() == Object.class) {
            return null;
        }
        return cache.computeIfAbsent(new MethodClassKey(method, targetClass), k -> parse(method, targetClass)).orElse(null);
    }

    /** @return every locked method found so far */
    Collection<LockedMethod> all() {
        return all.values();
    }

    private Optional<LockedMethod> parse(Method method, @Nullable Class<?> targetClass) {
        Method specific = targetClass == null ? method : AopUtils.getMostSpecificMethod(method, targetClass);
        Locked locked = AnnotatedElementUtils.findMergedAnnotation(specific, Locked.class);
        ScheduledLock scheduled = AnnotatedElementUtils.findMergedAnnotation(specific, ScheduledLock.class);
        if (locked == null && scheduled == null) {
            return NONE;
        }
        LockedMethod existing = all.get(specific);
        if (existing != null) {
            return Optional.of(existing);
        }
        String description = (scheduled != null ? "@ScheduledLock" : "@Locked") + " method "
                + ClassUtils.getQualifiedMethodName(specific, targetClass) + "(" + parameters(specific) + ")";
        if (locked != null && scheduled != null) {
            throw new IllegalStateException(description + " has both @Locked and @ScheduledLock: use one");
        }
        LockedMethod.Kind kind = kind(specific, scheduled != null, description);
        LockedMethod parsed;
        if (locked != null) {
            Duration defaultWait = duration(defaultWaitTimeout, "@EnableReactiveLocking(waitTimeout)", description, true);
            parsed = new LockedMethod(specific, description, kind, false, name(locked.value(), specific, description),
                    locked.client(), duration(locked.leaseTime(), "leaseTime", description),
                    duration(locked.waitTimeout(), "waitTimeout", description, true),
                    defaultWait == null ? Duration.ofSeconds(30) : defaultWait, locked.whenHeld(), null, null, "");
        } else {
            Duration atMost = duration(scheduled.lockAtMostFor(), "lockAtMostFor", description);
            if (atMost == null) {
                throw new IllegalStateException(description + ": lockAtMostFor is required");
            }
            Duration atLeast = duration(scheduled.lockAtLeastFor(), "lockAtLeastFor", description);
            if (atLeast != null && (atLeast.toNanos() % 1_000_000 != 0 || atLeast.compareTo(WindowLock.MAX_PERIOD) > 0)) {
                throw new IllegalStateException(description + ": lockAtLeastFor must be a whole number of milliseconds, at most "
                        + WindowLock.MAX_PERIOD + ", was " + atLeast);
            }
            parsed = new LockedMethod(specific, description, kind, true, name(scheduled.name(), specific, description),
                    scheduled.client(), null, null, null, Locked.WhenHeld.SKIP, atMost, atLeast, scheduled.windowLock());
        }
        LockedMethod raced = all.putIfAbsent(specific, parsed);
        return Optional.of(raced != null ? raced : parsed);
    }

    private static LockedMethod.Kind kind(Method method, boolean scheduled, String description) {
        Class<?> type = method.getReturnType();
        if (type == Mono.class) {
            return LockedMethod.Kind.MONO;
        }
        if (type == Flux.class || type == Publisher.class) {
            return LockedMethod.Kind.FLUX;
        }
        if (scheduled && type == void.class) {
            return LockedMethod.Kind.BLOCKING;
        }
        Class<?>[] params = method.getParameterTypes();
        if (params.length > 0 && params[params.length - 1].getName().equals("kotlin.coroutines.Continuation")) {
            return suspendKind(method, description);
        }
        throw new IllegalStateException(description + " returns " + method.getGenericReturnType().getTypeName()
                + ": a locked method must return Mono, Flux or Publisher (lazy, so that it runs under the lock), or be a Kotlin suspend function"
                + (scheduled ? ", or be a blocking void @Scheduled method" : ""));
    }

    /*
     * Spring AOP (6.1+) calls a Kotlin suspend function through CoroutinesUtils.invokeSuspendingFunction: proceed()
     * returns a cold Mono (a mono {} coroutine started on subscribe, so the body runs only once the lock is held), or a
     * Flux when the function's Kotlin return type is a Flow, and the proxy turns the advice's publisher back into the
     * suspend result (awaitSingleOrNull, or asFlow for a Flow). Both need kotlinx-coroutines-reactor and kotlin-reflect.
     */
    private static LockedMethod.Kind suspendKind(Method method, String description) {
        ClassLoader loader = method.getDeclaringClass().getClassLoader();
        if (!KotlinDetector.isSuspendingFunction(method) || !KotlinDetector.isKotlinReflectPresent()
                || !ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt", loader)) {
            throw new IllegalStateException(description + " is a Kotlin suspend function: Spring AOP runs it as a publisher only"
                    + " with kotlin-reflect and kotlinx-coroutines-reactor on the classpath; add both");
        }
        return "kotlinx.coroutines.flow.Flow".equals(new MethodParameter(method, -1).getParameterType().getName())
                ? LockedMethod.Kind.FLUX : LockedMethod.Kind.MONO;
    }

    private Expression name(String template, Method method, String description) {
        String resolved = resolve(template);
        if (resolved.isEmpty()) {
            throw new IllegalStateException(description + ": the lock name is required");
        }
        Expression expression;
        try {
            expression = PARSER.parseExpression(resolved, ParserContext.TEMPLATE_EXPRESSION);
        } catch (ParseException e) {
            throw new IllegalStateException(description + ": the lock name '" + template + "' does not parse: " + e.getMessage(), e);
        }
        List<String> variables = new ArrayList<>();
        variables(expression, variables);
        for (String variable : variables) {
            checkVariable(variable, template, method, description);
        }
        return expression;
    }

    /**
     * Fails when the name refers to a variable that a call of {@code method} does not define: SpEL would read it as
     * {@code null}, and every call would lock the same name.
     */
    private static void checkVariable(String variable, String template, Method method, String description) {
        if (variable.equals("root") || variable.equals("this")) {
            return;
        }
        int count = method.getParameterCount();
        String[] names = LockedMethod.PARAMETER_NAMES.getParameterNames(method);
        if (POSITIONAL.matcher(variable).matches()) {
            int index = Integer.parseInt(variable.substring(1));
            if (index < (names != null ? names.length : count)) {
                return;
            }
            throw new IllegalStateException(description + ": the lock name '" + template + "' refers to #" + variable
                    + ", but " + method.getName() + " has " + (names != null ? names.length : count) + " parameter(s)");
        }
        if (names == null) {
            throw new IllegalStateException(description + ": the lock name '" + template + "' refers to parameter #" + variable
                    + ", but the parameter names of " + method.getName() + " are not in its class file, so #" + variable
                    + " would be null on every call. Compile with -parameters (spring-boot-starter-parent and Boot's"
                    + " Gradle plugin do; a build that only imports a BOM must add it to the compiler), or name the argument"
                    + " by its position: #p0 (or #a0) for the first");
        }
        if (!Arrays.asList(names).contains(variable)) {
            throw new IllegalStateException(description + ": the lock name '" + template + "' refers to #" + variable
                    + ", but " + method.getName() + " has no parameter of that name (its parameters: "
                    + (names.length == 0 ? "none" : "#" + String.join(", #", names) + "; by position #p0 to #p" + (names.length - 1))
                    + ")");
        }
    }

    /** Collects the variables ({@code #name}) an expression, or each part of a template, refers to. */
    private static void variables(Expression expression, List<String> out) {
        if (expression instanceof CompositeStringExpression composite) {
            for (Expression part : composite.getExpressions()) {
                variables(part, out);
            }
        } else if (expression instanceof SpelExpression spel) {
            variables(spel.getAST(), out);
        }
    }

    private static void variables(SpelNode node, List<String> out) {
        if (node instanceof VariableReference) {
            out.add(node.toStringAST().substring(1)); // "#name"
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            variables(node.getChild(i), out);
        }
    }

    private @Nullable Duration duration(String text, String attribute, String description) {
        return duration(text, attribute, description, false);
    }

    /**
     * @param untilCancelled whether a negative duration is allowed (it means "wait until cancelled")
     * @return the duration, or null when {@code text} is empty
     */
    private @Nullable Duration duration(String text, String attribute, String description, boolean untilCancelled) {
        String resolved = resolve(text).trim();
        if (resolved.isEmpty()) {
            return null;
        }
        Duration d;
        try {
            d = DurationFormatterUtils.detectAndParse(resolved);
        } catch (IllegalArgumentException | DateTimeParseException e) {
            throw new IllegalStateException(description + ": " + attribute + " '" + text
                    + "' is not a duration (examples: \"30s\", \"500ms\", \"5m\", \"PT30S\")", e);
        }
        if (d.isZero() || (d.isNegative() && !untilCancelled)) {
            throw new IllegalStateException(description + ": " + attribute + " must be positive"
                    + (untilCancelled ? ", or " + Locked.UNTIL_CANCELLED + " to wait until cancelled" : "") + ", was " + d
                    + (text.equals(resolved) ? "" : " ('" + text + "')"));
        }
        return d;
    }

    private String resolve(String text) {
        ConfigurableBeanFactory bf = beanFactory;
        if (bf == null || text.isEmpty()) {
            return text;
        }
        String resolved = bf.resolveEmbeddedValue(text);
        return resolved == null ? "" : resolved;
    }

    private static String parameters(Method method) {
        StringBuilder sb = new StringBuilder();
        for (Class<?> p : method.getParameterTypes()) {
            sb.append(sb.length() == 0 ? "" : ", ").append(p.getSimpleName());
        }
        return sb.toString();
    }
}
