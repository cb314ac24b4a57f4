import PostgresNIO
import Synchronization

/// The statements PostgreSQL prepares once per connection: those that bind rows as arrays.
///
/// PostgreSQL parses and plans a statement sent without a name every time it runs. The writes of
/// a group of purchases bind their rows one array per column
/// (``LedgerSQL/StringInterpolation/appendInterpolation(values:)``), so their text is the same
/// whatever the number of rows, and a server runs the same few texts again and again. Each such
/// text (with the types of its binds) is given a number the first time it runs and from then on
/// runs as a named statement: each connection prepares it the first time it runs it there, then
/// binds and executes only. Other statements are sent with their text.
///
/// Named statements are never released (PostgresNIO has no way to), so at most ``capacity``
/// texts are prepared; a text past that is sent with its text.
final class PostgresPreparedTexts: Sendable {
    /// A statement's text and the types its binds declare.
    struct Key: Hashable, Sendable {
        var sql: String
        var types: [PostgresDataType]
    }

    private struct State {
        var numbers: [Key: Int] = [:]
        var prepared: [(key: Key, number: any PreparedNumber.Type)] = []
        /// Connections on which a prepared statement failed: they run every statement unnamed.
        var unprepared: [ObjectIdentifier: Unprepared] = [:]
    }

    static let shared = PostgresPreparedTexts()

    /// The most texts prepared.
    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int = 2000) {
        self.capacity = capacity
    }

    /// The number `key` is prepared under, given one if it has none yet; `nil` when there is no
    /// room for more.
    func number(for key: Key) -> (any PreparedNumber.Type)? {
        state.withLock { state in
            if let number = state.numbers[key] { return state.prepared[number].number }
            guard state.prepared.count < capacity else { return nil }
            let number = state.prepared.count
            let type = preparedNumber(number)
            state.numbers[key] = number
            state.prepared.append((key, type))
            return type
        }
    }

    /// The text and bind types prepared under `number`.
    func key(_ number: Int) -> Key {
        state.withLock { $0.prepared[number].key }
    }

    /// Whether `connection` runs its statements unnamed: a prepared statement failed on it.
    func runsUnnamed(_ connection: PostgresConnection) -> Bool {
        state.withLock { $0.unprepared[ObjectIdentifier(connection)]?.connection === connection }
    }

    /// Notes that a prepared statement failed on `connection`. PostgresNIO keeps a statement whose
    /// preparation failed failing on that connection (a preparation can fail for a while, as
    /// when a lock on a table it names is not granted in time), so the connection runs its
    /// statements unnamed from then on. Errors only an execution raises (a constraint, a conflict
    /// between transactions) leave it as it is.
    func failed(_ error: any Error, on connection: PostgresConnection) {
        if let state = PostgresLedger.sqlState(error), state.hasPrefix("23") || state.hasPrefix("40") { return }
        self.state.withLock { state in
            state.unprepared = state.unprepared.filter { $0.value.connection != nil }
            state.unprepared[ObjectIdentifier(connection)] = Unprepared(connection)
        }
    }

    /// A connection marked to run its statements unnamed, held weakly: once it is gone, another
    /// connection may have its identity.
    private final class Unprepared {
        weak var connection: PostgresConnection?
        init(_ connection: PostgresConnection) { self.connection = connection }
    }
}

/// A number as a type, so that each prepared text is a statement type of its own (PostgresNIO
/// names and prepares a statement by its type): binary digits, the lowest outermost.
protocol PreparedNumber {
    static var value: Int { get }
}

enum PreparedZero: PreparedNumber {
    static var value: Int { 0 }
}

enum PreparedDouble<Half: PreparedNumber>: PreparedNumber {
    static var value: Int { Half.value * 2 }
}

enum PreparedDoublePlusOne<Half: PreparedNumber>: PreparedNumber {
    static var value: Int { Half.value * 2 + 1 }
}

/// The type whose ``PreparedNumber/value`` is `number`.
private func preparedNumber(_ number: Int) -> any PreparedNumber.Type {
    guard number > 0 else { return PreparedZero.self }
    func double<Half: PreparedNumber>(_ half: Half.Type, plusOne: Bool) -> any PreparedNumber.Type {
        plusOne ? PreparedDoublePlusOne<Half>.self : PreparedDouble<Half>.self
    }
    return double(preparedNumber(number / 2), plusOne: number % 2 == 1)
}

/// The statement prepared under `Number` (``PostgresPreparedTexts``).
struct NumberedStatement<Number: PreparedNumber>: PostgresPreparedStatement {
    static var name: String { "kakin_\(Number.value)" }
    static var sql: String { PostgresPreparedTexts.shared.key(Number.value).sql }
    static var bindingDataTypes: [PostgresDataType] { PostgresPreparedTexts.shared.key(Number.value).types }

    typealias Row = PostgresRow
    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

extension PostgresConnection {
    /// The rows of `statement`, all read: prepared on this connection when it binds rows as
    /// arrays (``PostgresPreparedTexts``), otherwise sent with its text.
    func rows(of statement: LedgerSQL) async throws -> [PostgresRow] {
        let (sql, values) = statement.rendered(for: .postgresql)
        let binds = LedgerSQL.postgresBindings(values)
        let texts = PostgresPreparedTexts.shared
        guard values.contains(where: { if case .column = $0 { true } else { false } }), !texts.runsUnnamed(self),
            let number = texts.number(for: .init(sql: sql, types: values.map(\.postgresType)))
        else {
            return try await rows(PostgresQuery(unsafeSQL: sql, binds: binds))
        }
        do {
            return try await rows(number, binds)
        } catch {
            texts.failed(error, on: self)
            throw error
        }
    }

    private func rows<Number: PreparedNumber>(_ number: Number.Type, _ binds: PostgresBindings) async throws
        -> [PostgresRow]
    {
        try await rows(NumberedStatement<Number>(bindings: binds))
    }
}
