package io.reactivelocks.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.LockClient;
import io.reactivelocks.local.LocalLockBackend;
import java.io.ByteArrayOutputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.reactivestreams.Publisher;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import reactor.core.publisher.Mono;

/**
 * A lock name that refers to a variable its method cannot define would evaluate to {@code null} on every call, so that
 * every call locks the same name: such a method fails the context's start, naming the method and the variable. The
 * class without parameter names is compiled here with javac, without {@code -parameters}, as a build that only imports
 * a BOM compiles it.
 */
class LockedNameVariablesTest {

    private final LockClient client = LocalLockBackend.client();
    private final List<URLClassLoader> loaders = new java.util.ArrayList<>();

    @TempDir
    Path classes;

    @AfterEach
    void close() throws java.io.IOException {
        client.close().block(Duration.ofSeconds(10));
        for (URLClassLoader loader : loaders) {
            loader.close();
        }
    }

    private void start(Class<?> bean) {
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext()) {
            ctx.setClassLoader(bean.getClassLoader()); // proxies of a compiled fixture are defined in its loader
            ctx.register(LockedTest.Enable.class);
            ctx.registerBean("lockClient", LockClient.class, () -> client);
            ctx.registerBean(bean);
            ctx.refresh();
        }
    }

    @Test
    void aParameterNameInAClassCompiledWithoutParameterNamesFailsAtStartupNamingTheMethodAndTheParameter() throws Exception {
        Class<?> inventory = compileWithoutParameterNames("fixture.Inventory", """
                package fixture;

                public class Inventory {
                    @io.reactivelocks.spring.Locked("inventory:#{#sku}")
                    public reactor.core.publisher.Mono<String> reserve(String sku, long quantity) {
                        return reactor.core.publisher.Mono.just(sku);
                    }
                }
                """);
        assertThat(inventory.getMethod("reserve", String.class, long.class).getParameters()[0].isNamePresent())
                .as("compiled without -parameters").isFalse();
        assertThatThrownBy(() -> start(inventory))
                // the first line of the failure says it all
                .hasMessageContaining("@Locked method fixture.Inventory.reserve(String, long)")
                .hasMessageContaining("refers to parameter #sku")
                .hasMessageContaining("parameter names of reserve are not in its class file")
                .hasMessageContaining("-parameters")
                .hasMessageContaining("#p0 (or #a0)");
    }

    @Test
    void theSameClassCompiledWithParameterNamesStarts() throws Exception {
        Class<?> inventory = compile("fixture.Inventory", """
                package fixture;

                public class Inventory {
                    @io.reactivelocks.spring.Locked("inventory:#{#sku}")
                    public reactor.core.publisher.Mono<String> reserve(String sku, long quantity) {
                        return reactor.core.publisher.Mono.just(sku);
                    }
                }
                """, "-parameters");
        start(inventory);
    }

    @Test
    void aMisspeltNameOrAPositionPastTheLastArgumentFailsAtStartup() {
        assertThatThrownBy(() -> start(Misspelt.class))
                .hasMessageContaining("@Locked method io.reactivelocks.spring.LockedNameVariablesTest$Misspelt.reserve(String)")
                .hasMessageContaining("refers to #skus, but reserve has no parameter of that name (its parameters: #sku; by position #p0 to #p0)");
        assertThatThrownBy(() -> start(PastTheEnd.class))
                .hasMessageContaining("LockedNameVariablesTest$PastTheEnd.reserve(String)")
                .hasMessageContaining("refers to #a1, but reserve has 1 parameter(s)");
    }

    @Test
    void namesPositionsRootAndBeansAreFine() {
        start(Fine.class);
    }

    public static class Misspelt {
        @Locked("stock:#{#skus}")
        public Mono<String> reserve(String sku) {
            return Mono.just(sku);
        }
    }

    public static class PastTheEnd {
        @Locked("stock:#{#p0}:#{#a1}")
        public Mono<String> reserve(String sku) {
            return Mono.just(sku);
        }
    }

    public static class Fine {
        @Locked("stock:#{#sku}:#{#p1}:#{#a1 > 0 ? 'some' : 'none'}:#{#root == null}")
        public Mono<String> reserve(String sku, long quantity) {
            return Mono.just(sku);
        }
    }

    private Class<?> compileWithoutParameterNames(String className, String source) throws Exception {
        return compile(className, source);
    }

    /** Compiles one source file with this JDK's javac against this module's classes, and loads the class. */
    private Class<?> compile(String className, String source, String... options) throws Exception {
        Path file = classes.resolve(className.replace('.', '/') + ".java");
        Files.createDirectories(file.getParent());
        Files.writeString(file, source, StandardCharsets.UTF_8);
        String classpath = Stream.of(Locked.class, Mono.class, Publisher.class)
                .map(LockedNameVariablesTest::location)
                .collect(Collectors.joining(java.io.File.pathSeparator));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertThat(javac).as("a JDK's javac").isNotNull();
        List<String> args = new java.util.ArrayList<>(List.of("-proc:none", "-classpath", classpath, "-d", classes.toString()));
        args.addAll(List.of(options));
        args.add(file.toString());
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int exit = javac.run(null, null, errors, args.toArray(new String[0]));
        assertThat(exit).as("javac: %s", errors.toString(StandardCharsets.UTF_8)).isZero();
        URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader());
        loaders.add(loader);
        return loader.loadClass(className);
    }

    private static String location(Class<?> type) {
        try {
            return Paths.get(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
