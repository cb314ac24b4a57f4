import Testing

@testable import KakinLedger

/// Which statement texts PostgreSQL prepares (``PostgresPreparedTexts``), without a database.
struct PostgresPreparationTests {
    @Test("a text is numbered on its first run, keeps its number, and no more are numbered than the capacity")
    func numbersAndCapacity() {
        let texts = PostgresPreparedTexts(capacity: 2)
        let a = PostgresPreparedTexts.Key(sql: "SELECT $1", types: [.int8Array])
        let b = PostgresPreparedTexts.Key(sql: "SELECT $1", types: [.textArray])
        let c = PostgresPreparedTexts.Key(sql: "SELECT 2", types: [])
        #expect(texts.number(for: a)?.value == 0)
        #expect(texts.number(for: a)?.value == 0)
        // The same text with binds of other types is a statement of its own.
        #expect(texts.number(for: b)?.value == 1)
        #expect(texts.key(1) == b)
        // Full: nothing more is numbered, and what was keeps its number.
        #expect(texts.number(for: c) == nil)
        #expect(texts.number(for: a)?.value == 0)
    }

    @Test("every number has a type of its own, and a name of its own")
    func numbersAsTypes() {
        let texts = PostgresPreparedTexts(capacity: 300)
        var names = Set<String>()
        for number in 0..<300 {
            let type = texts.number(for: .init(sql: "SELECT \(number)", types: []))
            #expect(type?.value == number)
            if let type { names.insert(String(reflecting: type)) }
        }
        #expect(names.count == 300)
    }
}
