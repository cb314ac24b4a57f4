import AppStoreModels
import Foundation
import Testing

/// Apple's test vectors, read from the shared fixtures folder next to the repository.
///
/// The folder is `../shared/fixtures` relative to the repository root. It is not part of the
/// repository (Apple's files are not copied in); when it is absent, tests that need it are
/// disabled with a message instead of failing.
enum Fixtures {
    /// The repository root: this file is `Tests/AppStoreModelsTests/Support/Fixtures.swift`.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // AppStoreModelsTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// `../shared/fixtures`, beside the repository.
    static let directory = repositoryRoot.deletingLastPathComponent()
        .appendingPathComponent("shared", isDirectory: true)
        .appendingPathComponent("fixtures", isDirectory: true)

    /// Apple's model test vectors.
    static let modelsDirectory = directory.appendingPathComponent("apple-library/models", isDirectory: true)

    /// Whether the shared fixtures are present on this machine.
    static let available = FileManager.default.fileExists(atPath: modelsDirectory.path)

    /// Why fixture tests are skipped when the folder is missing.
    static let unavailableReason: Comment = "Apple's fixtures are not at ../shared/fixtures; skipping fixture tests"

    /// The bytes of `models/<name>.json`.
    static func model(_ name: String) throws -> Data {
        try Data(contentsOf: modelsDirectory.appendingPathComponent("\(name).json"))
    }

    /// The names (without `.json`) of every file in `models/`.
    static func modelNames() throws -> Set<String> {
        let files = try FileManager.default.contentsOfDirectory(atPath: modelsDirectory.path)
        return Set(files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) })
    }

    /// The decoded payload (middle segment) of a compact JWS stored at `relativePath` under the
    /// fixtures folder, such as `apple-library/xcode/xcode-signed-transaction`.
    static func jwsPayload(_ relativePath: String) throws -> Data {
        let text = try String(contentsOf: directory.appendingPathComponent(relativePath), encoding: .utf8)
        let segments = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".")
        guard segments.count == 3 else { throw FixtureError.notAJWS(relativePath) }
        var base64 = segments[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let payload = Data(base64Encoded: base64) else { throw FixtureError.notAJWS(relativePath) }
        return payload
    }

    enum FixtureError: Error {
        case notAJWS(String)
    }
}
