import Foundation
import KakinCore
import Testing

@Suite struct OwnerOnlyFilesTests {
    /// A new folder of the test's own, removed when the test ends.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kakin-files-\(UUID().uuidString)")

    init() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// No temporary file is left beside the ones written.
    static func leftovers(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }
    }

    @Test("a write replaces the file atomically, 0600, even over a wider one, and leaves nothing beside it")
    func writeReplaces() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = directory.appendingPathComponent("secret")
        try Data("wide".utf8).write(to: secret)
        try OwnerOnlyFiles.setMode(0o644, atPath: secret.path)
        try OwnerOnlyFiles.write(Data("one".utf8), to: secret)
        try OwnerOnlyFiles.write(Data("two".utf8), to: secret)
        #expect(OwnerOnlyFiles.mode(atPath: secret.path) == 0o600)
        #expect(try Data(contentsOf: secret) == Data("two".utf8))
        #expect(try Self.leftovers(in: directory).isEmpty)
        #expect(throws: (any Error).self) {
            try OwnerOnlyFiles.write(Data(), to: directory.appendingPathComponent("missing/secret"))
        }
    }

    @Test("creating never replaces: the first creator's bytes stay, 0600, and nothing is left beside them")
    func createKeepsTheFirst() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let created = directory.appendingPathComponent("created")
        #expect(try OwnerOnlyFiles.create(Data("first".utf8), at: created))
        #expect(try !OwnerOnlyFiles.create(Data("second".utf8), at: created))
        #expect(try Data(contentsOf: created) == Data("first".utf8))
        #expect(OwnerOnlyFiles.mode(atPath: created.path) == 0o600)
        #expect(try Self.leftovers(in: directory).isEmpty)
        #expect(throws: (any Error).self) {
            try OwnerOnlyFiles.create(Data(), at: directory.appendingPathComponent("missing/secret"))
        }
    }

    @Test("an empty file is created 0600 once; a second call leaves it")
    func createFileOnce() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path
        #expect(try OwnerOnlyFiles.createFile(atPath: path))
        #expect(try !OwnerOnlyFiles.createFile(atPath: path))
        #expect(OwnerOnlyFiles.mode(atPath: path) == 0o600)
        #expect(OwnerOnlyFiles.mode(atPath: directory.appendingPathComponent("none").path) == nil)
    }
}
