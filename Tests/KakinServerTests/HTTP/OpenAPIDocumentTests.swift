import Foundation
import HTTPTypes
@testable import KakinServer
@testable import KakinLedger
import KakinTestSupport
import Testing

/// The OpenAPI document (a resource file) and the router agree: every route is documented with
/// its methods, and every documented operation is served.
@Suite struct OpenAPIDocumentTests {
    /// The document's operations, as `METHOD /path` with each `{parameter}` written `{}`: read
    /// from the `paths:` section, where a path is indented by two spaces and its methods by four.
    static func documentedOperations(_ yaml: String) -> Set<String> {
        var operations: Set<String> = []
        var inPaths = false
        var path: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" {
                inPaths = true
                continue
            }
            guard inPaths else { continue }
            if !line.isEmpty, !line.hasPrefix(" ") { break }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = normalized(String(line.dropFirst(2).dropLast()))
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     ") {
                let key = line.dropFirst(4).prefix { $0 != ":" }
                if ["get", "post", "put", "delete", "patch"].contains(String(key)) {
                    operations.insert("\(key.uppercased()) \(path)")
                }
            }
        }
        return operations
    }

    /// A path with each parameter (`{name}` in the document, `:name` or `{name}` in the router) as `{}`.
    static func normalized(_ path: String) -> String {
        let trimmed = path.hasPrefix("/") ? path : "/" + path
        return trimmed.replacingOccurrences(of: #"\{[^}]*\}"#, with: "{}", options: .regularExpression)
            .replacingOccurrences(of: #":[A-Za-z_]+"#, with: "{}", options: .regularExpression)
    }

    @Test func everyRouteIsDocumentedAndEveryDocumentedOperationIsServed() async throws {
        let fixture = try await ServerFixture()
        let yaml = try #require(OpenAPIDocument.yaml, "the resource bundle holds the document")
        let documented = Self.documentedOperations(yaml)
        let served = Set(
            fixture.http.routerAndRoutes().routes.flatMap { route in
                route.methods.map { "\($0.rawValue) \(Self.normalized(route.path))" }
            })
        #expect(documented.count >= 14)
        #expect(served.subtracting(documented).isEmpty, "served but not documented: \(served.subtracting(documented).sorted())")
        #expect(documented.subtracting(served).isEmpty, "documented but not served: \(documented.subtracting(served).sorted())")
    }

    @Test func theDocumentComesFromAResourceFile() throws {
        #expect(try ServerResources.text("openapi.yaml").hasPrefix("openapi: 3.1.0"))
        #expect(throws: ServerError.self) { try ServerResources.text("no-such-file.txt") }
    }
}
