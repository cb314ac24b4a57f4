import Foundation
import Testing

/// Test data shared by the project, read from `../shared/fixtures` beside the repository.
///
/// The files are never copied into the repository. Tests that need them are enabled with
/// `.enabled(if: Fixtures.isAvailable, Fixtures.missingMessage)`, so a checkout without the
/// shared folder skips them with a clear message instead of failing.
enum Fixtures {
    /// `<repository>/../shared/fixtures`, found from this file's path.
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Tests/AppStoreSecurityTests/Support
        .deletingLastPathComponent()  // Tests/AppStoreSecurityTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // the repository root
        .deletingLastPathComponent()  // the folder that holds it and shared/
        .appendingPathComponent("shared/fixtures", isDirectory: true)

    /// Whether the shared fixtures are present.
    static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent("README.md").path)
    }

    /// Why fixture tests are skipped.
    static let missingMessage: Comment =
        "shared fixtures not found at ../shared/fixtures (relative to the repository root)"

    /// The bytes of the fixture at `path`, relative to the fixtures directory.
    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(path))
    }

    /// The text of the fixture at `path`, relative to the fixtures directory.
    static func text(_ path: String) throws -> String {
        String(decoding: try data(path), as: UTF8.self)
    }
}
