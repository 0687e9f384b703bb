package io.reactivelocks;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaConstructorCall;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.properties.HasName;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import io.reactivelocks.internal.Backoff;
import io.reactivelocks.internal.DefaultLockClient;
import io.reactivelocks.spi.LockBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.NullMarked;
import org.junit.jupiter.api.Test;

/**
 * The layering of the core module, checked on its main classes (docs/architecture.md, "Layering").
 *
 * <ul>
 *   <li>API: {@code io.reactivelocks} and the concept packages
 *       ({@code semaphore, rwlock, multi, window, election, fencing, task});</li>
 *   <li>SPI: {@code io.reactivelocks.spi..}, what a store implements, in terms of API types;</li>
 *   <li>engine: {@code io.reactivelocks.internal..}, built on API and SPI;</li>
 *   <li>{@code io.reactivelocks.local}: the in-memory store, a store like any other.</li>
 * </ul>
 *
 * <p>The one seam: a static method of an API type (the {@code create} factories, and
 * {@link LockListener#composite}) may call the constructor of an engine class and may name SPI
 * types (the store it is given). No other API code names an engine or SPI type.
 */
class ArchitectureTest {

    static final String CORE = "io.reactivelocks";
    static final String SPI = "io.reactivelocks.spi..";
    static final String INTERNAL = "io.reactivelocks.internal..";
    static final String LOCAL = "io.reactivelocks.local..";
    static final Set<String> API = Set.of(CORE, "io.reactivelocks.semaphore", "io.reactivelocks.rwlock",
            "io.reactivelocks.multi", "io.reactivelocks.window", "io.reactivelocks.election",
            "io.reactivelocks.fencing", "io.reactivelocks.task", "io.reactivelocks.admin");

    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(CORE);

    static boolean isApi(JavaClass c) {
        return API.contains(c.getPackageName());
    }

    static boolean isSpi(JavaClass c) {
        return c.getPackageName().equals("io.reactivelocks.spi") || c.getPackageName().startsWith("io.reactivelocks.spi.");
    }

    static boolean isInternal(JavaClass c) {
        return c.getPackageName().equals("io.reactivelocks.internal")
                || c.getPackageName().startsWith("io.reactivelocks.internal.");
    }

    static final DescribedPredicate<JavaClass> API_CLASSES =
            DescribedPredicate.describe("API classes", ArchitectureTest::isApi);
    static final DescribedPredicate<JavaClass> SEAM_TARGETS =
            DescribedPredicate.describe("engine or SPI classes", c -> isInternal(c) || isSpi(c));

    @Test
    void spiDoesNotImportTheEngine() {
        noClasses().that().resideInAPackage(SPI)
                .should().dependOnClassesThat().resideInAPackage(INTERNAL)
                .because("the SPI is what a store implements; the engine is built on it, not under it")
                .check(MAIN);
    }

    @Test
    void localStoreUsesApiAndSpiOnly() {
        noClasses().that().resideInAPackage(LOCAL)
                .should().dependOnClassesThat().resideInAPackage(INTERNAL)
                .because("the in-memory store is a store like the others: API and SPI only")
                .check(MAIN);
    }

    @Test
    void apiReachesEngineAndSpiOnlyThroughItsStaticFactories() {
        classes().that(API_CLASSES)
                .should(reachEngineAndSpiOnlyThroughStaticFactories())
                .check(MAIN);
    }

    @Test
    void theSeamRuleRejectsEverythingButAStaticFactoryCallingAConstructor() {
        List<String> details = classes().should(reachEngineAndSpiOnlyThroughStaticFactories())
                .evaluate(new ClassFileImporter().importClasses(SeamFixture.class))
                .getFailureReport().getDetails();
        assertThat(String.join("\n", details))
                .contains("field engineField has type io.reactivelocks.internal.Backoff")
                .contains("SeamFixture.instanceMethod accesses io.reactivelocks.internal.Backoff.delayNanos")
                .contains("SeamFixture.staticNonConstructor accesses io.reactivelocks.internal.Backoff.delayNanos")
                .contains("SeamFixture.instanceMethod has a parameter of type io.reactivelocks.spi.LockBackend")
                .doesNotContain("SeamFixture.factory ");
        assertThat(details).hasSize(4);
    }

    /** API-package code as the seam rule sees it: one allowed factory, four violations. */
    @SuppressWarnings("unused")
    static final class SeamFixture {
        io.reactivelocks.internal.@org.jspecify.annotations.Nullable Backoff engineField;

        static LockClient factory(LockBackend backend) {
            return new DefaultLockClient(backend, LockOptions.defaults(), LockListener.NONE);
        }

        long instanceMethod(LockBackend backend) {
            return Backoff.delayNanos(LockOptions.defaults().backoff(), 1);
        }

        static long staticNonConstructor() {
            return Backoff.delayNanos(LockOptions.defaults().backoff(), 1);
        }
    }

    @Test
    void corePackagesAreFreeOfCycles() {
        slices().assignedFrom(byPackageWithTheApiAsOne())
                .should().beFreeOfCycles()
                // the seam, pinned down by apiReachesEngineAndSpiOnlyThroughItsStaticFactories
                .ignoreDependency(API_CLASSES, SEAM_TARGETS)
                .check(MAIN);
    }

    @Test
    void conceptPackagesDoNotDependOnEachOther() {
        slices().assignedFrom(conceptPackages())
                .should().notDependOnEachOther()
                .check(MAIN);
    }

    @Test
    void everyMainPackageIsNullMarked() {
        List<String> missing = new ArrayList<>();
        MAIN.stream().map(JavaClass::getPackage).distinct()
                .filter(p -> !p.isAnnotatedWith(NullMarked.class))
                .forEach(p -> missing.add(p.getName()));
        if (!missing.isEmpty()) {
            throw new AssertionError("packages without @NullMarked on their package-info: " + missing);
        }
    }

    /**
     * Slices by package, except that the API packages are one slice: {@link LockStore} hands out
     * every concept and every concept takes {@link LockOptions} and gives a {@link Lease}; that
     * two-way link is the API itself. That the concept packages do not lean on each other is
     * {@link #conceptPackagesDoNotDependOnEachOther}.
     */
    static SliceAssignment byPackageWithTheApiAsOne() {
        return new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                if (isApi(c)) {
                    return SliceIdentifier.of("API");
                }
                return c.getPackageName().startsWith(CORE + ".")
                        ? SliceIdentifier.of(c.getPackageName()) : SliceIdentifier.ignore();
            }

            @Override
            public String getDescription() {
                return "core packages (the API packages as one)";
            }
        };
    }

    static SliceAssignment conceptPackages() {
        return new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                return isApi(c) && !c.getPackageName().equals(CORE)
                        ? SliceIdentifier.of(c.getPackageName()) : SliceIdentifier.ignore();
            }

            @Override
            public String getDescription() {
                return "concept API packages";
            }
        };
    }

    /**
     * The seam: API code names an engine type only to call its constructor from a static method
     * of an API type, and an SPI type only inside a static method of an API type (the store a
     * factory is given). Fields, supertypes, instance methods and other static calls never name them.
     */
    static ArchCondition<JavaClass> reachEngineAndSpiOnlyThroughStaticFactories() {
        return new ArchCondition<>("reach engine and SPI only through static factories") {
            @Override
            public void check(JavaClass c, ConditionEvents events) {
                for (JavaClass t : c.getRawInterfaces()) {
                    forbid(c, t, "implements", events);
                }
                c.getRawSuperclass().ifPresent(t -> forbid(c, t, "extends", events));
                for (JavaField f : c.getFields()) {
                    forbid(c, f.getRawType(), "field " + f.getName() + " has type", events);
                }
                for (JavaCodeUnit u : c.getCodeUnits()) {
                    boolean factory = u.getModifiers().contains(JavaModifier.STATIC)
                            && !u.getName().equals("<clinit>");
                    for (JavaClass t : u.getRawParameterTypes()) {
                        check(c, u, factory, false, t, "has a parameter of type", events);
                    }
                    check(c, u, factory, false, u.getRawReturnType(), "returns", events);
                    for (JavaClass t : u.getExceptionTypes()) {
                        check(c, u, factory, false, t, "throws", events);
                    }
                    for (JavaAccess<?> a : u.getAccessesFromSelf()) {
                        check(c, u, factory, a instanceof JavaConstructorCall, a.getTargetOwner(),
                                "accesses " + a.getTarget().getFullName() + " of", events);
                    }
                    u.getInstanceofChecks().forEach(i -> check(c, u, false, false, i.getRawType(),
                            "checks instanceof", events));
                    u.getReferencedClassObjects().forEach(r -> check(c, u, false, false, r.getRawType(),
                            "references the class object", events));
                }
            }

            private void check(JavaClass c, HasName unit, boolean factory, boolean constructorCall,
                               JavaClass target, String what, ConditionEvents events) {
                boolean allowed = isSpi(target) ? factory : !isInternal(target) || factory && constructorCall;
                if (!allowed) {
                    events.add(SimpleConditionEvent.violated(c, c.getName() + "." + unit.getName() + " " + what
                            + " " + target.getName() + " outside the factory seam"));
                }
            }

            private void forbid(JavaClass c, JavaClass target, String what, ConditionEvents events) {
                if (isInternal(target) || isSpi(target)) {
                    events.add(SimpleConditionEvent.violated(c, c.getName() + " " + what + " " + target.getName()
                            + " outside the factory seam"));
                }
            }
        };
    }
}
