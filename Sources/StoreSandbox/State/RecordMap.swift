import Foundation

/// A dictionary from string keys to values that remembers which keys changed since the last
/// save, so a store writes only those rows.
///
/// Reads like a `Dictionary`: subscripts, `values`, `keys`, iteration over `(key, value)` pairs.
/// Every way of changing it goes through its own methods, so nothing changes unseen.
public struct RecordMap<Value: Codable & Hashable & Sendable>: Sequence, Sendable {
    private var storage: [String: Value] = [:]
    /// Keys set or removed since the journal was last cleared.
    private var changedKeys: Set<String> = []
    /// Whether every row was dropped since the journal was last cleared.
    private var droppedAll = false

    /// An empty map.
    public init() {}

    /// A map of `values`, all of them unsaved.
    public init(_ values: [String: Value]) {
        storage = values
        changedKeys = Set(values.keys)
    }

    /// A map read back from a store; nothing unsaved.
    init(restoring values: [String: Value]) {
        storage = values
    }

    /// The value for `key`; setting `nil` removes it.
    public subscript(key: String) -> Value? {
        get { storage[key] }
        set {
            storage[key] = newValue
            changedKeys.insert(key)
        }
    }

    /// The value for `key`, or `defaultValue` when there is none; setting stores the value.
    public subscript(key: String, default defaultValue: @autoclosure () -> Value) -> Value {
        get { storage[key] ?? defaultValue() }
        set {
            storage[key] = newValue
            changedKeys.insert(key)
        }
    }

    /// How many keys the map holds.
    public var count: Int { storage.count }

    /// Whether the map is empty.
    public var isEmpty: Bool { storage.isEmpty }

    /// The keys, in no particular order.
    public var keys: Dictionary<String, Value>.Keys { storage.keys }

    /// The values, in no particular order.
    public var values: Dictionary<String, Value>.Values { storage.values }

    /// The contents as a plain dictionary.
    public var dictionary: [String: Value] { storage }

    public func makeIterator() -> Dictionary<String, Value>.Iterator { storage.makeIterator() }

    /// Removes the value for `key` and returns it.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> Value? {
        guard let removed = storage.removeValue(forKey: key) else { return nil }
        changedKeys.insert(key)
        return removed
    }

    /// Removes the entries that satisfy `predicate`.
    public mutating func removeAll(where predicate: (_ key: String, _ value: Value) -> Bool) {
        for (key, value) in storage where predicate(key, value) { removeValue(forKey: key) }
    }

    /// Removes everything.
    public mutating func removeAll() {
        storage = [:]
        changedKeys = []
        droppedAll = true
    }

    // MARK: - The journal

    /// The rows a store must write to catch up with this map: whether to drop every row first,
    /// then each changed key with its value, or `nil` for a removed one.
    var journal: (dropAll: Bool, rows: [(key: SandboxStateChanges.RowKey, record: Value?)]) {
        (droppedAll, changedKeys.sorted().map { (.name($0), storage[$0]) })
    }

    /// Whether anything changed since the journal was last cleared.
    var hasChanges: Bool { droppedAll || !changedKeys.isEmpty }

    /// Forgets what changed, once a store has written it.
    mutating func clearJournal() {
        changedKeys = []
        droppedAll = false
    }

    /// Marks the whole map as unsaved: a store drops its rows and writes every value again.
    mutating func markAllChanged() {
        droppedAll = true
        changedKeys = Set(storage.keys)
    }
}

extension RecordMap: Equatable {
    /// Two maps are equal when they hold the same entries, whatever is unsaved.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.storage == rhs.storage }
}

extension RecordMap: Hashable {
    public func hash(into hasher: inout Hasher) { hasher.combine(storage) }
}

extension RecordMap: Codable {
    /// Reads a plain JSON object (all of it unsaved).
    public init(from decoder: any Decoder) throws {
        self.init(try [String: Value](from: decoder))
    }

    /// Writes a plain JSON object.
    public func encode(to encoder: any Encoder) throws {
        try storage.encode(to: encoder)
    }
}

extension RecordMap: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, Value)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
