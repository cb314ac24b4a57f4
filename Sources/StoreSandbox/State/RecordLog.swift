import Foundation

/// A record kept in a ``RecordLog``: how it is found by key and by the groups it belongs to.
public protocol LoggedRecord: Codable, Hashable, Sendable {
    /// The record's unique key, or `nil` when records of this kind are only kept in order.
    var recordKey: String? { get }
    /// The groups the record belongs to now; the log lists each group's records in order.
    var recordGroups: [RecordGroup] { get }
}

/// A secondary index of a ``RecordLog``: the records that share a tester, a subscription, an order.
public enum RecordGroup: Hashable, Sendable {
    /// The records of one tester.
    case tester(String)
    /// The transactions of one purchase or subscription (one original transaction ID).
    case original(String)
    /// The transactions of one order ID.
    case order(String)
    /// Notifications still to be attempted.
    case undelivered
}

/// An ordered list of records that finds a record by key or by group without scanning, and
/// remembers which records changed since the last save, so a store writes only those.
///
/// Every record has an ordinal: a number given when it is appended, increasing, kept across saves
/// and restarts, and never reused. A store keeps one row per ordinal. Removing a record leaves an
/// empty slot until the log is read again, so the positions the indexes hold stay valid.
public struct RecordLog<Element: LoggedRecord>: Sequence, Sendable {
    private var slots: [Element?] = []
    private var ordinals: [Int64] = []
    private var nextOrdinal: Int64 = 1
    private var slotByKey: [String: Int] = [:]
    private var slotsByGroup: [RecordGroup: [Int]] = [:]
    private var liveCount = 0
    /// Slots changed, added or emptied since the journal was last cleared.
    private var changedSlots: Set<Int> = []
    /// Whether every row was dropped since the journal was last cleared.
    private var droppedAll = false

    /// An empty log.
    public init() {}

    /// A log of `elements`, all of them unsaved.
    public init(_ elements: some Sequence<Element>) {
        append(contentsOf: elements)
    }

    /// A log read back from a store: records with their ordinals, in any order; nothing unsaved.
    init(restoring rows: [(ordinal: Int64, element: Element)]) {
        for row in rows.sorted(by: { $0.ordinal < $1.ordinal }) {
            place(row.element, ordinal: row.ordinal)
        }
        nextOrdinal = (ordinals.last ?? 0) + 1
    }

    /// How many records the log holds.
    public var count: Int { liveCount }

    /// Whether the log is empty.
    public var isEmpty: Bool { liveCount == 0 }

    /// The records in order.
    public var elements: [Element] { slots.compactMap { $0 } }

    /// The last record.
    public var last: Element? { slots.last { $0 != nil } ?? nil }

    public func makeIterator() -> some IteratorProtocol<Element> {
        slots.lazy.compactMap { $0 }.makeIterator()
    }

    /// The record with `key`; setting a record adds it (at the end) or replaces it in place, and
    /// setting `nil` removes it.
    public subscript(key: String) -> Element? {
        get { slotByKey[key].flatMap { slots[$0] } }
        set {
            if let slot = slotByKey[key] {
                if let newValue { replace(at: slot, with: newValue) } else { remove(at: slot) }
            } else if let newValue {
                append(newValue)
            }
        }
    }

    /// The records of `group`, in order.
    public func records(in group: RecordGroup) -> [Element] {
        (slotsByGroup[group] ?? []).compactMap { slots[$0] }
    }

    /// The first record of `group`.
    public func first(in group: RecordGroup) -> Element? {
        for slot in slotsByGroup[group] ?? [] {
            if let element = slots[slot] { return element }
        }
        return nil
    }

    /// The last record of `group` that satisfies `predicate`, searching from the end.
    public func last(in group: RecordGroup, where predicate: (Element) -> Bool) -> Element? {
        for slot in (slotsByGroup[group] ?? []).reversed() {
            if let element = slots[slot], predicate(element) { return element }
        }
        return nil
    }

    /// A mark of the log's end now, to list later what was appended after it.
    public var endMark: Int { slots.count }

    /// The records appended since `mark` was taken (those still there), in order.
    public func records(since mark: Int) -> [Element] {
        slots[Swift.min(Swift.max(mark, 0), slots.count)...].compactMap { $0 }
    }

    /// Adds a record at the end.
    public mutating func append(_ element: Element) {
        place(element, ordinal: nextOrdinal)
        nextOrdinal += 1
        changedSlots.insert(slots.count - 1)
    }

    /// Adds records at the end, in order.
    public mutating func append(contentsOf elements: some Sequence<Element>) {
        for element in elements { append(element) }
    }

    /// Changes every record of `group` with `change`, in order.
    public mutating func update(in group: RecordGroup, _ change: (inout Element) -> Void) {
        for slot in slotsByGroup[group] ?? [] {
            guard var element = slots[slot] else { continue }
            change(&element)
            replace(at: slot, with: element)
        }
    }

    /// Removes the records of `group` that satisfy `predicate` (all of them by default).
    public mutating func removeAll(in group: RecordGroup, where predicate: (Element) -> Bool = { _ in true }) {
        guard let listed = slotsByGroup[group] else { return }
        var kept: [Int] = []
        for slot in listed {
            guard let element = slots[slot] else { continue }
            if predicate(element) { remove(at: slot, except: group) } else { kept.append(slot) }
        }
        slotsByGroup[group] = kept.isEmpty ? nil : kept
    }

    /// Removes the records that satisfy `predicate`, looking at every record.
    public mutating func removeAll(where predicate: (Element) -> Bool) {
        for slot in slots.indices {
            if let element = slots[slot], predicate(element) { remove(at: slot) }
        }
    }

    /// Removes every record; ordinals go on from where they were.
    public mutating func removeAll() {
        slots = []
        ordinals = []
        slotByKey = [:]
        slotsByGroup = [:]
        liveCount = 0
        changedSlots = []
        droppedAll = true
    }

    // MARK: - The journal

    /// The rows a store must write to catch up with this log: whether to drop every row first,
    /// then each changed ordinal with its record, or `nil` for a removed one.
    var journal: (dropAll: Bool, rows: [(key: SandboxStateChanges.RowKey, record: Element?)]) {
        (droppedAll, changedSlots.sorted().map { (.ordinal(ordinals[$0]), slots[$0]) })
    }

    /// Whether anything changed since the journal was last cleared.
    var hasChanges: Bool { droppedAll || !changedSlots.isEmpty }

    /// Forgets what changed, once a store has written it.
    mutating func clearJournal() {
        changedSlots = []
        droppedAll = false
    }

    /// Marks the whole log as unsaved: a store drops its rows and writes every record again.
    mutating func markAllChanged() {
        droppedAll = true
        changedSlots = Set(slots.indices.filter { slots[$0] != nil })
    }

    // MARK: - Slots

    private mutating func place(_ element: Element, ordinal: Int64) {
        let slot = slots.count
        slots.append(element)
        ordinals.append(ordinal)
        liveCount += 1
        if let key = element.recordKey { slotByKey[key] = slot }
        for group in element.recordGroups { slotsByGroup[group, default: []].append(slot) }
    }

    private mutating func replace(at slot: Int, with element: Element) {
        guard let old = slots[slot] else { return }
        if old.recordKey != element.recordKey {
            if let key = old.recordKey { slotByKey[key] = nil }
            if let key = element.recordKey { slotByKey[key] = slot }
        }
        let oldGroups = old.recordGroups
        let newGroups = element.recordGroups
        if oldGroups != newGroups {
            for group in oldGroups where !newGroups.contains(group) { unlist(slot, from: group) }
            for group in newGroups where !oldGroups.contains(group) { list(slot, in: group) }
        }
        slots[slot] = element
        changedSlots.insert(slot)
    }

    /// Empties `slot`; `kept` names a group whose list the caller rewrites itself.
    private mutating func remove(at slot: Int, except kept: RecordGroup? = nil) {
        guard let old = slots[slot] else { return }
        if let key = old.recordKey { slotByKey[key] = nil }
        for group in old.recordGroups where group != kept { unlist(slot, from: group) }
        slots[slot] = nil
        liveCount -= 1
        changedSlots.insert(slot)
    }

    private mutating func list(_ slot: Int, in group: RecordGroup) {
        Self.insert(slot, into: &slotsByGroup[group, default: []])
    }

    private mutating func unlist(_ slot: Int, from group: RecordGroup) {
        guard slotsByGroup[group] != nil else { return }
        if Self.remove(slot, from: &slotsByGroup[group, default: []]) { slotsByGroup[group] = nil }
    }

    /// Inserts `slot` into an ascending list of slots, in place.
    private static func insert(_ slot: Int, into listed: inout [Int]) {
        listed.insert(slot, at: position(of: slot, in: listed))
    }

    /// Removes `slot` from an ascending list of slots, in place; says whether the list is now empty.
    private static func remove(_ slot: Int, from listed: inout [Int]) -> Bool {
        let position = position(of: slot, in: listed)
        if position < listed.count, listed[position] == slot { listed.remove(at: position) }
        return listed.isEmpty
    }

    /// Where `slot` is, or would go, in an ascending list of slots.
    private static func position(of slot: Int, in listed: [Int]) -> Int {
        var low = 0
        var high = listed.count
        while low < high {
            let middle = (low + high) / 2
            if listed[middle] < slot { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

extension RecordLog: Equatable {
    /// Two logs are equal when they hold the same records in the same order, whatever is unsaved.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.elements == rhs.elements }
}

extension RecordLog: Hashable {
    public func hash(into hasher: inout Hasher) { hasher.combine(elements) }
}

extension RecordLog: Codable {
    /// Reads a plain JSON array of records (all of them unsaved).
    public init(from decoder: any Decoder) throws {
        self.init(try [Element](from: decoder))
    }

    /// Writes a plain JSON array of records.
    public func encode(to encoder: any Encoder) throws {
        try elements.encode(to: encoder)
    }
}

extension RecordLog: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}
