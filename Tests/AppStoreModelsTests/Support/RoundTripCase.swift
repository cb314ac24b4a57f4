import AppStoreModels
import Foundation
import Testing

/// A model type and a JSON sample of it, for round-trip tests that need no fixtures.
struct RoundTripCase: Sendable, CustomTestStringConvertible {
    let typeName: String
    let check: @Sendable () throws -> (equal: Bool, differences: [String])

    var testDescription: String { typeName }

    static func of<Model: Codable & Equatable & Sendable>(_ type: Model.Type, _ json: String) -> RoundTripCase {
        RoundTripCase(typeName: String(reflecting: type)) {
            let outcome = try RoundTrip.run(Model.self, json)
            return (outcome.first == outcome.second, outcome.differences)
        }
    }
}
