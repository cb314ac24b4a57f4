import Testing

@testable import KakinDashboard

/// The dashboard's templates are resource files of the module.
@Suite struct DashboardResourcesTests {
    @Test func theTemplatesComeFromResourceFiles() throws {
        let templates = try DashboardResources.templates()
        #expect(templates.count == 10)
        #expect(templates["retention-messages"]?.contains("Retention messages") == true)
        #expect(templates["layout"]?.contains("<!doctype html>") == true)
    }
}
