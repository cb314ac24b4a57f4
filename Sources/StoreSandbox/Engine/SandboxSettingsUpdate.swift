public import AppStoreModels
public import Foundation

/// A change to some of the sandbox-wide settings: what is not named keeps its value.
///
/// As JSON (the control API's `PUT /v1/control/settings`), a key that is absent keeps its value, a
/// value replaces it, and an explicit `null` clears a setting that may be unset (`failPurchasesWith`,
/// `notificationURL`). `null` for `askToBuy` or `gracePeriodDays`, a key the settings do not have, or
/// a value of the wrong type is refused, so a misspelt key never passes silently.
public struct SandboxSettingsUpdate: Decodable, Hashable, Sendable {
    /// What happens to one setting.
    public enum Change<Value: Hashable & Sendable>: Hashable, Sendable {
        /// The setting keeps its value.
        case keep
        /// The setting takes this value.
        case set(Value)
        /// The setting is unset (only for settings that may be unset).
        case clear
    }

    /// The code every purchase fails with, or `.clear` for purchases that succeed.
    public var failPurchasesWith: Change<StoreKitErrorCode>
    /// Ask to buy for every tester.
    public var askToBuy: Bool?
    /// Grace period length in days for billing failures; 0 disables it.
    public var gracePeriodDays: Int?
    /// Where notifications are posted, or `.clear` to keep them queued.
    public var notificationURL: Change<URL>

    /// Creates an update; every setting not given keeps its value.
    public init(
        failPurchasesWith: Change<StoreKitErrorCode> = .keep, askToBuy: Bool? = nil, gracePeriodDays: Int? = nil,
        notificationURL: Change<URL> = .keep
    ) {
        self.failPurchasesWith = failPurchasesWith
        self.askToBuy = askToBuy
        self.gracePeriodDays = gracePeriodDays
        self.notificationURL = notificationURL
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case failPurchasesWith, askToBuy, gracePeriodDays, notificationURL
    }

    /// Any key, to name the ones the settings do not have.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let all = try decoder.container(keyedBy: AnyKey.self)
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        if let unknown = all.allKeys.map(\.stringValue).filter({ !known.contains($0) }).sorted().first {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [AnyKey(stringValue: unknown)],
                    debugDescription: "the settings have no key \"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))"))
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        failPurchasesWith = try Self.change(StoreKitErrorCode.self, .failPurchasesWith, in: container)
        notificationURL = try Self.change(URL.self, .notificationURL, in: container)
        askToBuy = try Self.required(Bool.self, .askToBuy, in: container)
        gracePeriodDays = try Self.required(Int.self, .gracePeriodDays, in: container)
        if let days = gracePeriodDays, days < 0 {
            throw DecodingError.dataCorruptedError(
                forKey: .gracePeriodDays, in: container, debugDescription: "gracePeriodDays must be 0 or more, not \(days)")
        }
    }

    private static func change<Value: Decodable>(
        _ type: Value.Type, _ key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>
    ) throws -> Change<Value> {
        guard container.contains(key) else { return .keep }
        if try container.decodeNil(forKey: key) { return .clear }
        return .set(try container.decode(Value.self, forKey: key))
    }

    private static func required<Value: Decodable>(
        _ type: Value.Type, _ key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>
    ) throws -> Value? {
        guard container.contains(key) else { return nil }
        if try container.decodeNil(forKey: key) {
            throw DecodingError.valueNotFound(
                Value.self,
                .init(codingPath: [key], debugDescription: "\(key.rawValue) cannot be null; leave it out to keep its value"))
        }
        return try container.decode(Value.self, forKey: key)
    }

    /// The settings after this update.
    public func applied(to settings: SandboxSettings) -> SandboxSettings {
        var result = settings
        switch failPurchasesWith {
        case .keep: break
        case .set(let code): result.failPurchasesWith = code
        case .clear: result.failPurchasesWith = nil
        }
        switch notificationURL {
        case .keep: break
        case .set(let url): result.notificationURL = url
        case .clear: result.notificationURL = nil
        }
        if let askToBuy { result.askToBuy = askToBuy }
        if let gracePeriodDays { result.gracePeriodDays = gracePeriodDays }
        return result
    }
}
