import Foundation
import Testing

/// Apple's test vectors, read from `../shared/fixtures` beside the repository. They are not part of
/// the repository; tests that need them are skipped, with this message, when the folder is absent.
enum Fixtures {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // AppStoreSecurityTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // repository
        .deletingLastPathComponent()
        .appendingPathComponent("shared/fixtures/apple-library")

    static var available: Bool { FileManager.default.fileExists(atPath: root.path) }

    static let skipMessage: Comment = "Apple's fixtures are not present at ../shared/fixtures; skipped"

    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent(path))
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try data(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
