import KakinLedger
/// The server's API description, served at `/openapi.yaml`: the resource file
/// `Resources/openapi.yaml`, read once.
///
/// It lists every status each route can answer; `scripts/schemathesis` checks the running server
/// against it (statuses, content types, bodies and headers), and a test checks that it documents
/// every route the router serves and nothing else.
enum OpenAPIDocument {
    /// The document's text; `nil` when the resource bundle is missing.
    static let yaml: String? = try? ServerResources.text("openapi.yaml")
}
