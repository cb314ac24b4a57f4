import AppStoreModels
import Foundation

/// One of Stripe's events, as a webhook delivers it and as `GET /v1/events` lists it: what
/// happened (``type``, e.g. `invoice.paid`), when, and the object it happened to, as it was then.
///
/// The object is kept as JSON (``object``) and read as the type its ``objectType`` names with
/// ``object(as:)``, so an event of a type Kakin does not act on is still recorded whole. Its shape
/// is that of the event's ``apiVersion``: the webhook endpoint's version, which Stripe sets when the
/// endpoint is made.
struct StripeEvent: Codable, Sendable, Equatable {
    /// The event's ID (`evt_…`), unique per Stripe account: an event delivered twice has one ID.
    var id: String
    /// What happened, e.g. `payment_intent.succeeded`, `invoice.paid`, `charge.refunded`.
    var type: String
    /// When Stripe made the event.
    var created: Date
    /// The API version the object is shaped by (`nil` for events older than versioning).
    var apiVersion: String?
    /// Whether the event is of live mode (`false` for test mode).
    var livemode: Bool
    /// The object as it was when the event was made.
    var object: JSONValue
    /// For `*.updated` events, the values of the fields that changed, before the change.
    var previousAttributes: JSONValue?

    /// The object's type as Stripe names it (`payment_intent`, `invoice`, `customer.subscription`
    /// events carry a `subscription`…), from its `object` field.
    var objectType: String? { object["object"]?.stringValue }
    /// The object's ID, from its `id` field.
    var objectID: String? { object["id"]?.stringValue }

    /// The object read as `T`, with the decoder Stripe's answers are read with
    /// (``StripeClient/decoder``).
    func object<T: Decodable>(as type: T.Type) throws -> T {
        try StripeClient.decoder.decode(T.self, from: JSONEncoder().encode(object))
    }

    /// An event from Stripe's JSON: a webhook's body or an element of a list of events.
    init(json: Data) throws(StripeEventError) {
        do {
            self = try StripeClient.decoder.decode(StripeEvent.self, from: json)
        } catch {
            throw StripeEventError(reason: Self.describe(error))
        }
        guard !id.isEmpty, !type.isEmpty, case .object = object else {
            throw StripeEventError(reason: "an event needs an id, a type and an object")
        }
    }

    private enum CodingKeys: String, CodingKey {
        case id, object, type, created, livemode, data
        case apiVersion = "api_version"
    }

    private enum DataKeys: String, CodingKey {
        case object
        case previousAttributes = "previous_attributes"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let kind = try container.decodeIfPresent(String.self, forKey: .object), kind != "event" {
            throw DecodingError.dataCorruptedError(
                forKey: .object, in: container, debugDescription: "not an event but a \(kind)")
        }
        id = try container.decode(String.self, forKey: .id)
        type = try container.decode(String.self, forKey: .type)
        created = Date(timeIntervalSince1970: TimeInterval(try container.decode(Int64.self, forKey: .created)))
        apiVersion = try container.decodeIfPresent(String.self, forKey: .apiVersion)
        livemode = try container.decodeIfPresent(Bool.self, forKey: .livemode) ?? false
        let data = try container.nestedContainer(keyedBy: DataKeys.self, forKey: .data)
        object = try data.decode(JSONValue.self, forKey: .object)
        previousAttributes = try data.decodeIfPresent(JSONValue.self, forKey: .previousAttributes)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode("event", forKey: .object)
        try container.encode(type, forKey: .type)
        try container.encode(Int64(created.timeIntervalSince1970.rounded(.down)), forKey: .created)
        try container.encodeIfPresent(apiVersion, forKey: .apiVersion)
        try container.encode(livemode, forKey: .livemode)
        var data = container.nestedContainer(keyedBy: DataKeys.self, forKey: .data)
        try data.encode(object, forKey: .object)
        try data.encodeIfPresent(previousAttributes, forKey: .previousAttributes)
    }

    /// The event as Stripe's JSON (keys sorted), for an event that came in a list rather than as a
    /// body of its own: it reads back as the same event.
    var json: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// What a decoding error says, in a line.
    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "no \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty
                ? context.debugDescription
                : "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: "not JSON"
        }
    }
}

/// A body that is not one of Stripe's events.
struct StripeEventError: Error, Equatable, Sendable {
    /// What is wrong with it.
    var reason: String
}
