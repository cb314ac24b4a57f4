import Foundation

/// Which events to list: filters and a page's place, as `GET /v1/events` takes them.
struct StripeEventQuery: Sendable, Hashable {
    /// Only events of this type (`invoice.paid`…).
    var type: String?
    /// Only events created after this time (`created[gt]`, whole seconds).
    var createdAfter: Date?
    /// Only events created at or after this time (`created[gte]`, whole seconds).
    var createdFrom: Date?
    /// The page after the event with this id (`starting_after`): the last id of the page before.
    var startingAfter: String?
    /// How many events a page holds (Stripe allows 1 to 100, and gives 10 by default).
    var limit: Int?

    /// A query with the given filters and page.
    init(
        type: String? = nil, createdAfter: Date? = nil, createdFrom: Date? = nil, startingAfter: String? = nil,
        limit: Int? = nil
    ) {
        self.type = type
        self.createdAfter = createdAfter
        self.createdFrom = createdFrom
        self.startingAfter = startingAfter
        self.limit = limit
    }

    /// The query as Stripe's parameters.
    var form: StripeForm {
        var form = StripeForm()
        form.append(type, at: "type")
        form.append(createdAfter, at: "created", "gt")
        form.append(createdFrom, at: "created", "gte")
        form.append(startingAfter, at: "starting_after")
        form.append(limit, at: "limit")
        return form
    }
}

extension StripeClient {
    /// One page of events matching `query`, each whole (``StripeEvent``).
    func listEvents(_ query: StripeEventQuery) async throws(StripeError) -> StripeList<StripeEvent> {
        try await send(.get, "/v1/events", form: query.form)
    }
}
