import AppStoreModels
import Foundation
import Hummingbird
import KakinServer

/// `/dashboard/retention/messages`: each opened app's Retention Messaging, managed through Apple's
/// API with the app's In-App Purchase key (``RetentionOperations``): messages and images with their
/// review state, default messages, the real-time URL, the performance test, and the configured
/// rules with a preview. Reads are `GET`s (a preview, a look-up, a test's result); every change is
/// a form posted with the session's CSRF token, for an app the session opens.
extension DashboardRoutes {
    static let retentionMessagesPath = "/dashboard/retention/messages"

    /// The apps a session opens that have an In-App Purchase key, by bundle ID in order.
    func retentionApps(_ session: DashboardSessions.Session) -> [AppConfiguration] {
        session.scope.opened(service.apps.values.filter { $0.serverAPI != nil }.map(\.bundleID))
            .compactMap { service.apps[$0] }
    }

    /// The operations on `app`'s messages in the environment `name` names, else the app's default.
    func retentionOperations(
        _ app: AppConfiguration, environment name: String?
    ) throws(ServerError) -> RetentionOperations {
        let environment = name.flatMap(RetentionOperations.environment(named:)) ?? app.defaultEnvironment
        return try RetentionOperations(
            app: app, environment: environment, exchange: service.exchange, now: service.realNow)
    }

    func retentionMessagesPage(_ request: Request, _ session: DashboardSessions.Session) async throws -> Page {
        // Read as a form is: a browser sends a GET form's spaces as `+`.
        let query = Self.parseForm(request.uri.query ?? "") ?? [:]
        var apps: [RetentionMessagesView.App] = []
        for app in retentionApps(session) {
            // The forms and look-ups of the query are about one app: the others show their lists only.
            let asked = query["app"] == app.bundleID
            apps.append(await retentionView(app, query: asked ? query : [:]))
        }
        return Page(
            template: "retention-messages", view: RetentionMessagesView(apps: apps, hasApps: !apps.isEmpty),
            title: "Retention messages", current: "retention-messages")
    }

    /// One app's part of the page; what Apple refuses is shown in the app's card, not as the page's failure.
    private func retentionView(_ app: AppConfiguration, query: [String: String]) async -> RetentionMessagesView.App {
        var view = RetentionMessagesView.App(app: app)
        let operations: RetentionOperations
        do { operations = try retentionOperations(app, environment: query["environment"]) } catch {
            view.problems.append(error.message)
            return view
        }
        view.environment = operations.environment.rawValue.lowercased()
        view.otherEnvironment = view.environment == "production" ? "sandbox" : "production"
        func note(_ what: String, _ error: ServerError) { view.problems.append("\(what): \(error.message)") }
        do {
            view.messages =
                try await operations.client.messageList(environment: operations.environment)
                .messageIdentifiers?.map { .init($0.messageIdentifier, $0.messageState, size: nil) } ?? []
        } catch { note("Messages", error) }
        do {
            view.images =
                try await operations.client.imageList(environment: operations.environment)
                .imageIdentifiers?.map { .init($0.imageIdentifier, $0.imageState, size: $0.imageSize) } ?? []
        } catch { note("Images", error) }
        do { view.realtimeURL = try await operations.realtimeURL() } catch { note("Real-time URL", error) }

        if let header = query["header"], let body = query["body"] {
            view.draft = .init(header: header, body: body, image: query["image"] ?? "", altText: query["altText"] ?? "")
            do {
                let message = try RetentionOperations.message(
                    header: header, body: body, imageIdentifier: query["image"], altText: query["altText"])
                let preview = RetentionMessagePreview(message)
                view.preview = .init(lines: preview.lines, problems: preview.problems)
            } catch { note("Preview", error) }
        }
        if let product = query["product"], let locale = query["locale"], !product.isEmpty, !locale.isEmpty {
            do {
                let message = try await operations.defaultMessage(productID: product, locale: locale)
                view.defaultLookup = .init(product: product, locale: locale, message: message ?? "none")
            } catch { note("Default message", error) }
        }
        if let requestID = query["test"], !requestID.isEmpty {
            do {
                let result = try await operations.client.performanceTestResult(requestID: requestID)
                view.performance = .init(requestID: requestID, result: result)
            } catch { note("Performance test \(requestID)", error) }
        }
        if let transaction = query["transaction"], !transaction.isEmpty {
            do {
                let preview = try await service.previewRetention(
                    bundleID: app.bundleID, originalTransactionID: transaction,
                    locale: query["previewLocale"] ?? "en-US")
                view.rulesPreview = .init(transaction: transaction, lines: preview.lines)
            } catch { note("Rules preview", ServerError(error)) }
        }
        view.hasMessages = !view.messages.isEmpty
        view.hasImages = !view.images.isEmpty
        return view
    }

    /// Performs one posted change for an app the session opens, and leads back to the page with
    /// what was done or why Apple refused. An app the session does not open (or one without an
    /// In-App Purchase key) is answered 404 and nothing is sent.
    func retentionMessagesAction(_ form: [String: String], session: DashboardSessions.Session) async -> Response {
        guard let bundleID = form["app"], let app = retentionApps(session).first(where: { $0.bundleID == bundleID })
        else {
            logger.warning("dashboard retention action refused: the session does not open the app")
            return render(
                "message",
                MessageView(
                    heading: "Not found",
                    text: "This session opens no app with that bundle ID and an In-App Purchase key."),
                title: "Not found", session: session, current: nil, status: .notFound)
        }
        var back = [URLQueryItem(name: "app", value: bundleID)]
        if let environment = form["environment"] { back.append(URLQueryItem(name: "environment", value: environment)) }
        do {
            let operations = try retentionOperations(app, environment: form["environment"])
            let (notice, extra) = try await retentionChange(form, operations)
            logger.info(
                "dashboard retention action", metadata: ["app": "\(bundleID)", "action": "\(form["action"] ?? "")"])
            return Self.redirect(Self.retentionLink(back + extra), notice: "\(bundleID): \(notice)")
        } catch {
            return Self.redirect(Self.retentionLink(back), problem: "\(bundleID): \(error.message)")
        }
    }

    /// The change a form asks for, made: what to tell the operator, and what the page shows next.
    private func retentionChange(
        _ form: [String: String], _ operations: RetentionOperations
    ) async throws(ServerError) -> (String, [URLQueryItem]) {
        func field(_ name: String) throws(ServerError) -> String {
            guard let value = form[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
                throw ServerError(.invalidRequest, "the form has no \(name)")
            }
            return value
        }
        let client = operations.client
        let environment = operations.environment
        switch try field("action") {
        case "upload-message":
            let message = try RetentionOperations.message(
                header: try field("header"), body: try field("body"), imageIdentifier: form["image"],
                altText: form["altText"])
            let id = try await operations.uploadMessage(message)
            return ("uploaded message \(id.uuidString.lowercased()); Apple reviews it before it can be shown", [])
        case "delete-message":
            let id = try RetentionOperations.uuid(try field("id"), "the message identifier")
            try await client.deleteMessage(id, environment: environment)
            return ("deleted message \(id.uuidString.lowercased())", [])
        case "delete-image":
            let id = try RetentionOperations.uuid(try field("id"), "the image identifier")
            try await client.deleteImage(id, environment: environment)
            return ("deleted image \(id.uuidString.lowercased())", [])
        case "set-default":
            let (product, locale) = (try field("product"), try field("locale"))
            let id = try RetentionOperations.uuid(try field("message"), "the message identifier")
            try await client.configureDefaultMessage(
                productID: product, locale: locale, messageIdentifier: id, environment: environment)
            return (
                "the default message of \(product) in \(locale) is \(id.uuidString.lowercased())",
                [URLQueryItem(name: "product", value: product), URLQueryItem(name: "locale", value: locale)]
            )
        case "delete-default":
            let (product, locale) = (try field("product"), try field("locale"))
            try await client.deleteDefaultMessage(productID: product, locale: locale, environment: environment)
            return ("deleted the default message of \(product) in \(locale)", [])
        case "set-realtime-url":
            let text = try field("url")
            guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
                throw ServerError(.invalidRequest, "the real-time URL must be absolute; found \(text)")
            }
            try await client.configureRealtimeURL(url, environment: environment)
            return ("the real-time URL is \(url.absoluteString)", [])
        case "delete-realtime-url":
            try await client.deleteRealtimeURL(environment: environment)
            return ("deleted the real-time URL", [])
        case "start-performance-test":
            let started = try await client.initiatePerformanceTest(originalTransactionID: try field("transaction"))
            let id = started.requestID ?? ""
            return (
                "started performance test \(id); reload to read its result", [URLQueryItem(name: "test", value: id)]
            )
        case let other:
            throw ServerError(.invalidRequest, "the retention messages page has no action \(other)")
        }
    }

    static func retentionLink(_ items: [URLQueryItem]) -> String {
        var components = URLComponents()
        components.path = retentionMessagesPath
        components.queryItems = items.isEmpty ? nil : items
        return (components.string ?? retentionMessagesPath).replacingOccurrences(of: "+", with: "%2B")
    }
}

/// What `retention-messages.mustache` shows.
struct RetentionMessagesView {
    struct Item {
        var id: String
        var state: String
        var stateClass: String
        var size: String?

        init(_ id: String?, _ state: RetentionReviewState?, size: RetentionImageSize?) {
            self.id = id ?? "?"
            self.state = state?.rawValue ?? "?"
            stateClass = state == .approved ? "active" : state == .rejected ? "failed" : "pending"
            self.size = size?.rawValue
        }
    }
    struct Draft {
        var header: String
        var body: String
        var image: String
        var altText: String
    }
    struct Preview {
        var lines: [String]
        var problems: [String]
    }
    struct DefaultLookup {
        var product: String
        var locale: String
        var message: String
    }
    struct Performance {
        var requestID: String
        var status: String
        var stateClass: String
        var summary: String
        var failures: [String]

        init(requestID: String, result: PerformanceTestResultResponse) {
            self.requestID = requestID
            status = result.result?.rawValue ?? "?"
            stateClass = result.result == .pass ? "active" : result.result == .fail ? "failed" : "pending"
            let times = result.responseTimes
            summary =
                "\(result.successRate ?? 0) % succeeded (\(result.config?.successRateThreshold ?? 0) % needed), "
                + "\(result.numPending ?? 0) pending; p50 \(times?.p50 ?? 0) ms, p90 \(times?.p90 ?? 0) ms, "
                + "p99 \(times?.p99 ?? 0) ms; target \(result.target ?? "?")"
            failures = (result.failures ?? [:]).filter { $0.value > 0 }.sorted { $0.key < $1.key }
                .map { "\($0.key): \($0.value)" }
        }
    }
    struct RulesPreview {
        var transaction: String
        var lines: [String]
    }
    struct Rule {
        var name: String
        var conditions: [String]
        var matchesEveryone: Bool
        var answer: String
    }
    struct App {
        var bundleID: String
        var environment = ""
        var otherEnvironment = ""
        var problems: [String] = []
        var messages: [Item] = []
        var images: [Item] = []
        var realtimeURL: String?
        var products: [String]
        var rules: [Rule]
        var draft = Draft(header: "", body: "", image: "", altText: "")
        var preview: Preview?
        var defaultLookup: DefaultLookup?
        var performance: Performance?
        var rulesPreview: RulesPreview?
        var hasMessages = false
        var hasImages = false
        var hasProducts: Bool
        var hasRules: Bool

        init(app: AppConfiguration) {
            bundleID = app.bundleID
            products = app.catalog?.allSubscriptions.compactMap(\.productID) ?? []
            rules = (app.retention?.rules ?? []).map {
                Rule(
                    name: $0.name, conditions: $0.conditions, matchesEveryone: $0.conditions.isEmpty,
                    answer: $0.answer.summary)
            }
            hasProducts = !products.isEmpty
            hasRules = !rules.isEmpty
        }
    }

    var apps: [App]
    var hasApps: Bool
}
