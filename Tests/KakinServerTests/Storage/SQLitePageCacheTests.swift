import Foundation
import KakinSQLite
import Testing

@Suite("The layer over SQLite's page cache")
struct SQLitePageCacheTests {
    /// A deterministic generator (xorshift), so that a failure can be replayed.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
    }

    func count(_ connection: SQLiteDirectConnection, _ sql: String) throws -> Int64 {
        guard case .integer(let value)? = try connection.query(sql).rows.first?.first else { return -1 }
        return value
    }

    func integrity(_ connection: SQLiteDirectConnection) throws -> String {
        guard case .text(let verdict)? = try connection.query("PRAGMA integrity_check").rows.first?.first else {
            return "no answer"
        }
        return verdict
    }

    @Test("a rolled-back transaction that grew the database leaves no pages past its end in the cache", arguments: [
        "WAL", "DELETE",
    ])
    func pagesPastTheEndAreDropped(journalMode: String) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-pcache-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try SQLiteDirectConnection(path: directory.appendingPathComponent("grow.sqlite").path)
        _ = try connection.query("PRAGMA journal_mode = \(journalMode)")
        try connection.execute("PRAGMA cache_size = 20000")
        try connection.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, key TEXT NOT NULL, value BLOB NOT NULL)")
        try connection.execute("CREATE INDEX rows_by_key ON rows (key)")
        try connection.execute("INSERT INTO rows (id, key, value) VALUES (0, 'first', x'00')")
        let before = connection.pageCacheBytes

        // About 2,500 new pages, with index splits that move pages through the lock page's number.
        try connection.execute("BEGIN")
        var random = Generator(state: 42)
        for id in 1...5_000 {
            try connection.execute(
                "INSERT INTO rows (id, key, value) VALUES (?, ?, ?)",
                [.integer(Int64(id)), .text(String(UInt64.random(in: 0...UInt64.max, using: &random), radix: 36)),
                 .blob(Data(count: 1_500))])
        }
        let grown = connection.pageCacheBytes
        try connection.execute("ROLLBACK")
        let after = connection.pageCacheBytes

        #expect(grown > before + 5_000_000)
        #expect(after < before + 1_000_000, "the pages past the end were dropped (before \(before), grown \(grown), after \(after))")
        #expect(try count(connection, "SELECT count(*) FROM rows") == 1)
    }

    /// Random keys in an index split pages and reorder them (the moves through a number past the
    /// end of the file); rolled-back transactions and savepoints, deletes and `VACUUM` shrink the
    /// database again, so pages past its end must really be dropped when the layer lets them be.
    @Test("with splits, rollbacks, deletes and VACUUM, the database keeps exactly what was committed", arguments: [
        "WAL", "DELETE",
    ])
    func databaseStaysExact(journalMode: String) throws {
        #expect(SQLiteDirectConnection.usesPageCacheLayer, "the test process opened SQLite through this layer first")
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-pcache-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("cache.sqlite").path
        let connection = try SQLiteDirectConnection(path: path)
        _ = try connection.query("PRAGMA journal_mode = \(journalMode)")
        try connection.execute("PRAGMA cache_size = 64")
        try connection.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, key TEXT NOT NULL, value BLOB NOT NULL)")
        try connection.execute("CREATE INDEX rows_by_key ON rows (key)")

        var random = Generator(state: 0x9E37_79B9_7F4A_7C15)
        var committed: [Int64: String] = [:]
        var nextID: Int64 = 1
        for round in 0..<40 {
            try connection.execute("BEGIN")
            var pending = committed
            for _ in 0..<Int.random(in: 50...400, using: &random) {
                let key = String(UInt64.random(in: 0...UInt64.max, using: &random), radix: 36)
                let size = Int.random(in: 10...3_000, using: &random)
                try connection.execute(
                    "INSERT INTO rows (id, key, value) VALUES (?, ?, ?)",
                    [.integer(nextID), .text(key), .blob(Data(repeating: UInt8(truncatingIfNeeded: nextID), count: size))])
                pending[nextID] = key
                nextID += 1
            }
            if round % 4 == 1 {
                // A savepoint that grows the file and is rolled back inside the transaction.
                try connection.execute("SAVEPOINT inner")
                for index in 0..<300 {
                    try connection.execute(
                        "INSERT INTO rows (id, key, value) VALUES (?, ?, ?)",
                        [.integer(1_000_000 + Int64(index)), .text("s\(index)"), .blob(Data(count: 2_000))])
                }
                try connection.execute("ROLLBACK TO inner")
                try connection.execute("RELEASE inner")
            }
            if round % 5 == 2, let victim = pending.keys.randomElement(using: &random) {
                try connection.execute("DELETE FROM rows WHERE id >= ?", [.integer(victim)])
                pending = pending.filter { $0.key < victim }
            }
            if round % 3 == 0 {
                try connection.execute("ROLLBACK")
            } else {
                try connection.execute("COMMIT")
                committed = pending
            }
            if round % 10 == 9 { try connection.execute("VACUUM") }

            #expect(try integrity(connection) == "ok", "round \(round)")
            #expect(try count(connection, "SELECT count(*) FROM rows") == Int64(committed.count), "round \(round)")
            let keys = try connection.query("SELECT id, key FROM rows ORDER BY id").rows
            let stored = Dictionary(uniqueKeysWithValues: keys.compactMap { row -> (Int64, String)? in
                guard case .integer(let id) = row[0], case .text(let key) = row[1] else { return nil }
                return (id, key)
            })
            #expect(stored == committed, "round \(round)")
        }
        // A second connection reads the same from the file.
        let other = try SQLiteDirectConnection(path: path)
        #expect(try count(other, "SELECT count(*) FROM rows") == Int64(committed.count))
        #expect(try integrity(other) == "ok")
    }
}
