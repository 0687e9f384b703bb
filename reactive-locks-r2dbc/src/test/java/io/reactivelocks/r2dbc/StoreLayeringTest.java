package io.reactivelocks.r2dbc;

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
 * A store uses the API and the SPI of the core only, never its engine ({@code io.reactivelocks.internal});
 * every package of its main code is {@code @NullMarked}. See docs/architecture.md, "Layering".
 */
class StoreLayeringTest {

    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.reactivelocks.r2dbc");

    @Test
    void storeUsesApiAndSpiOnly() {
        noClasses().should().dependOnClassesThat().resideInAPackage("io.reactivelocks.internal..")
                .because("a store implements the SPI in terms of the API; the engine is not its to use")
                .check(MAIN);
    }

    @Test
    void everyMainPackageIsNullMarked() {
        List<String> missing = MAIN.stream().map(JavaClass::getPackage).distinct()
                .filter(p -> !p.isAnnotatedWith(NullMarked.class))
                .map(p -> p.getName()).toList();
        assertThat(MAIN).isNotEmpty();
        assertThat(missing).as("packages without @NullMarked on their package-info").isEmpty();
    }
}
