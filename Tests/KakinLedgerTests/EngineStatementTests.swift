import Foundation
import Testing

/// The statements that write are defined once, for both engines (`Storage/Roles`, with the
/// `LedgerSQL` dialect); an engine's folder writes none of its own. The files listed here still
/// hold writes of one engine's own, each for the reason given; a write added anywhere else in an
/// engine's folder fails this test, and so does a listed file that no longer needs its entry.
@Suite("Ledger: no engine writes statements of its own")
struct EngineStatementTests {
    /// The files that still hold an engine's own writes, and why.
    static let remaining: [String: String] = [
        "SQLite/SQLiteLedger.swift": "the migrations' bookkeeping in GRDB's own table",
        "Postgres/PostgresLedger.swift": "the migrations' claims",
    ]

    static let storage = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/KakinLedger/Storage")

    @Test("only the listed files of an engine write statements of their own")
    func enginesWriteNothingElse() throws {
        let write = try Regex(#"INSERT INTO|UPDATE [a-z_]+ SET|DELETE FROM"#)
        var writing: Set<String> = []
        for folder in ["SQLite", "Postgres"] {
            let directory = Self.storage.appendingPathComponent(folder)
            for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                if text.contains(write) { writing.insert("\(folder)/\(file)") }
            }
        }
        #expect(!writing.isEmpty, "the engines' folders are found at \(Self.storage.path)")
        let added = writing.subtracting(Self.remaining.keys)
        #expect(added.isEmpty, "write these through statements defined once (Storage/Roles): \(added.sorted())")
        let done = Set(Self.remaining.keys).subtracting(writing)
        #expect(done.isEmpty, "no longer writing on their own; take them off the list: \(done.sorted())")
    }
}
