package io.reactivelocks.test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.List;
import org.jspecify.annotations.NullMarked;
import org.junit.jupiter.api.Test;

/**
 * The layering every store keeps: it uses the API and the SPI of the core only, never its engine
 * ({@code io.reactivelocks.internal}); every package of its main code is {@code @NullMarked}. A store's
 * test extends it and names the store's package. See docs/architecture.md, "Layering".
 */
public abstract class StoreLayeringContract {

    private JavaClasses main;

    /** @return the root package of the store's main code, e.g. {@code "io.reactivelocks.redis"} */
    protected abstract String storePackage();

    private JavaClasses main() {
        if (main == null) {
            main = new ClassFileImporter()
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .importPackages(storePackage());
        }
        return main;
    }

    @Test
    void storeUsesApiAndSpiOnly() {
        noClasses().should().dependOnClassesThat().resideInAPackage("io.reactivelocks.internal..")
                .because("a store implements the SPI in terms of the API; the engine is not its to use")
                .check(main());
    }

    @Test
    void everyMainPackageIsNullMarked() {
        JavaClasses classes = main();
        List<String> missing = classes.stream().map(JavaClass::getPackage).distinct()
                .filter(p -> !p.isAnnotatedWith(NullMarked.class))
                .map(p -> p.getName()).toList();
        assertThat(classes).isNotEmpty();
        assertThat(missing).as("packages without @NullMarked on their package-info").isEmpty();
    }
}
