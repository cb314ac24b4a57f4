import Foundation

/// Which events to list: filters and a page's place, as `GET /v1/events` takes them.
struct StripeEventQuery: Sendable, Hashable {
    /// Only events of this type (`invoice.paid`…).
    var type: String?
    /// Only events created after this time (`created[gt]`, whole seconds).
    var createdAfter: Date?
    /// The page after the event with this id (`starting_after`): the last id of the page before.
    var startingAfter: String?
    /// How many events a page holds (Stripe allows 1 to 100, and gives 10 by default).
    var limit: Int?

    /// A query with the given filters and page.
    init(type: String? = nil, createdAfter: Date? = nil, startingAfter: String? = nil, limit: Int? = nil) {
        self.type = type
        self.createdAfter = createdAfter
        self.startingAfter = startingAfter
        self.limit = limit
    }

    /// The query as Stripe's parameters.
    var form: StripeForm {
        var form = StripeForm()
        form.append(type, at: "type")
        form.append(createdAfter, at: "created", "gt")
        form.append(startingAfter, at: "starting_after")
        form.append(limit, at: "limit")
        return form
    }
}

/// An event as listed, read for what tells events apart: its id, type, time and the id of the
/// object it is about.
struct StripeEventSummary: Decodable, Sendable, Hashable {
    var id: String
    var type: String
    var created: Date
    /// The id of the object the event carries (`data.object.id`).
    var objectID: String?

    enum CodingKeys: String, CodingKey {
        case id, type, created, data
    }

    enum DataKeys: String, CodingKey {
        case object
    }

    /// Reads an event's id, type, time and object id, ignoring the rest.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        type = try container.decode(String.self, forKey: .type)
        created = try container.decode(Date.self, forKey: .created)
        if container.contains(.data), try !container.decodeNil(forKey: .data) {
            let data = try container.nestedContainer(keyedBy: DataKeys.self, forKey: .data)
            objectID = try data.decodeExpandableID(forKey: .object)
        }
    }
}

extension StripeClient {
    /// One page of events matching `query`, each read as `Event` (any decodable event shape).
    func listEvents<Event: Decodable & Sendable>(
        _ query: StripeEventQuery, as type: Event.Type
    ) async throws(StripeError) -> StripeList<Event> {
        try await send(.get, "/v1/events", form: query.form)
    }

    /// One page of events matching `query`, each read as a ``StripeEventSummary``.
    func listEvents(_ query: StripeEventQuery) async throws(StripeError) -> StripeList<StripeEventSummary> {
        try await listEvents(query, as: StripeEventSummary.self)
    }
}
