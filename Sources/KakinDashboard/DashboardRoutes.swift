public import Crypto
public import Foundation
public import KakinServer
import KakinLedger
import HTTPTypes
public import Hummingbird
import Logging
import Mustache
import NIOCore

/// The operators' dashboard at `/dashboard`: server-rendered pages (Mustache) over the ledger,
/// and, when a sandbox App Store runs in the same process, its transaction manager.
///
/// Nothing but the sign-in page and the style sheet is served without a session; every form
/// carries the session's CSRF token, checked before anything is done.
///
/// A session opens the apps of the key that signed it in (`DashboardScope`, in KakinLedger): an
/// app's secret key opens every app whose secret key it is, and the operator key
/// (`DashboardConfiguration.operatorKey`, in KakinServer) opens every app. Each page shows, and
/// each form acts on, those apps only; a customer of another app is not found.
public struct DashboardRoutes: Sendable {
    /// The purchase service whose ledger the pages show and whose operations their forms call.
    public let service: PurchaseService
    /// What the activity page's reconcile button starts against Apple; `nil` when the server has none.
    public let reconciliations: ReconciliationRunner?
    /// The sandbox App Store in the same process, for the transaction manager; `nil` hides it.
    public let sandbox: (any SandboxControl)?
    /// The app whose products the sandbox sells: sessions that open it use the transaction
    /// manager. `nil`: only sessions that open every app do (the operator key's).
    public let sandboxApp: String?
    /// The webhook endpoints deliveries are made to, for the activity page.
    public let webhookEndpoints: [String]
    let configuration: DashboardConfiguration
    /// The apps' secret keys, each with its app: each signs in to its apps.
    let appKeys: [(secret: String, bundleID: String)]
    /// The deployment's operator key, which signs in to every app.
    let operatorKey: String?
    let sessions: DashboardSessions
    /// Counts wrong keys against their address and the dashboard account; makes the address wait.
    let throttle: SignInThrottle
    let library: MustacheLibrary
    /// The style sheet, `Resources/Dashboard/dashboard.css`.
    let css: String
    let now: @Sendable () -> Date
    let logger: Logger

    static let sessionCookie = "kakin_session"
    static let loginCookie = "kakin_login"
    static let maxFormBytes = 64 * 1024

    /// Prepares the dashboard: reads its templates and style sheet, and takes the apps' secret keys
    /// (each opening its apps) and the configuration's operator key (opening every app) as what
    /// signs in.
    ///
    /// - Parameters:
    ///   - sandbox: the sandbox App Store in the same process, for the transaction manager.
    ///   - sandboxApp: the app whose products `sandbox` sells; sessions that open it (and the
    ///     operator key's) use the transaction manager. `nil`: the operator key's sessions only.
    ///   - formKey: the key that authenticates sign-in forms; servers sharing one database must share
    ///     it (``KakinServer/ServerDependencies/addDashboard(sandbox:sandboxApp:)`` derives it from
    ///     the server key).
    ///   - signInThrottle: the server's throttle, so that the dashboard and the API count wrong
    ///     secrets together; by default one of its own over the same ledger.
    /// - Throws: when a template or the style sheet cannot be read, or a template does not parse;
    ///   `invalidConfiguration` when the operator key is also an app's key.
    public init(
        service: PurchaseService, configuration: DashboardConfiguration, reconciliations: ReconciliationRunner? = nil,
        sandbox: (any SandboxControl)? = nil, sandboxApp: String? = nil, webhookEndpoints: [String] = [],
        formKey: SymmetricKey = SymmetricKey(size: .bits256), now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = KakinServerHTTP.quietLogger, signInThrottle: SignInThrottle? = nil
    ) throws {
        self.service = service
        self.configuration = configuration
        self.reconciliations = reconciliations
        self.sandbox = sandbox
        self.sandboxApp = sandboxApp
        self.webhookEndpoints = webhookEndpoints
        self.appKeys = service.apps.values.filter { !$0.secretKey.isEmpty }.map { ($0.secretKey, $0.bundleID) }
            .sorted { $0.bundleID < $1.bundleID }
        let operatorKey = configuration.operatorKey.flatMap { $0.isEmpty ? nil : $0 }
        if let operatorKey, service.apps.values.contains(where: { [$0.secretKey, $0.publicKey].contains(operatorKey) })
        {
            throw ServerError(
                .invalidConfiguration,
                "dashboard.operatorKey must differ from every app's keys: it opens every app, an app's key its own")
        }
        self.operatorKey = operatorKey
        let throttle = signInThrottle ?? SignInThrottle(service: service, logger: logger, now: now)
        self.sessions = DashboardSessions(
            ledger: throttle.ledger, lifetime: TimeInterval(configuration.sessionSeconds), formKey: formKey, now: now)
        self.throttle = throttle
        var library = MustacheLibrary()
        // Each page's template is rendered inside `{{#page}}`, so the session's `csrf` (one level up)
        // is found from every form, however deep in a list it is.
        for (name, text) in try DashboardResources.templates() {
            try library.register(name == "layout" ? text : "{{#page}}\(text){{/page}}", named: name)
        }
        self.library = library
        self.css = try DashboardResources.css()
        self.now = now
        self.logger = logger
    }

    /// Adds the dashboard's routes (and `GET /`, which leads to it) to `router`.
    public func add(to router: Router<KakinRequestContext>) {
        router.get("/") { _, _ in Self.redirect("/dashboard") }
        router.get("dashboard/assets/dashboard.css") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "max-age=300"],
                body: .init(byteBuffer: ByteBuffer(string: css)))
        }
        router.get("dashboard/login") { request, _ in await loginPage(request, problem: nil) }
        router.post("dashboard/login") { request, context in await login(request, peer: context.remoteAddress) }
        router.post("dashboard/logout") { request, _ in
            await action(request) { session, _ in
                do { try await sessions.end(session.token) } catch { return unavailable(error, session: session) }
                var response = Self.redirect("/dashboard/login")
                response.headers[values: .setCookie] = [cookie(Self.sessionCookie, "", maxAge: 0, for: request)]
                return response
            }
        }
        router.get("dashboard") { request, _ in await page(request) { try await overviewPage(request, $0) } }
        router.get("dashboard/customers") { request, _ in
            await page(request) { try await customersPage(request, $0) }
        }
        router.get("dashboard/customer") { request, _ in
            await page(request) { try await customerPage(request, $0) }
        }
        router.get("dashboard/activity") { request, _ in await page(request) { try await activityPage($0) } }
        router.get("dashboard/retention") { request, _ in
            await page(request) { try await retentionPage(request, $0) }
        }
        router.post("dashboard/reconcile") { request, _ in
            await action(request) { session, _ in
                guard let reconciliations else {
                    return Self.redirect("/dashboard/activity", problem: "reconciliation is not configured")
                }
                let apps = reconcilableApps(session)
                guard !apps.isEmpty else {
                    return Self.redirect(
                        "/dashboard/activity", problem: "no app this session opens reads from the App Store Server API")
                }
                var started: [String] = []
                for bundleID in apps {
                    do {
                        let run = try await reconciliations.start(bundleID: bundleID)
                        started.append("\(bundleID) (run \(run.id))")
                    } catch {
                        return Self.redirect("/dashboard/activity", problem: "\(bundleID): \(ServerError(error).message)")
                    }
                }
                return Self.redirect(
                    "/dashboard/activity",
                    notice: "Reconciliation started: " + started.joined(separator: ", ") + ". Runs are listed below.")
            }
        }
        router.get("dashboard/sandbox") { request, _ in await page(request) { try await sandboxPage($0) } }
        router.post("dashboard/sandbox/action") { request, _ in
            await action(request) { session, form in await sandboxAction(form, session: session) }
        }
        router.get("dashboard/retention/messages") { request, _ in
            await page(request) { try await retentionMessagesPage(request, $0) }
        }
        router.post("dashboard/retention/messages/action") { request, _ in
            await action(request) { session, form in await retentionMessagesAction(form, session: session) }
        }
    }

    // MARK: - Sign-in

    func loginPage(_ request: Request, problem: String?) async -> Response {
        await loginPage(request, problem: problem, status: problem == nil ? .ok : .unauthorized)
    }

    func loginPage(_ request: Request, problem: String?, status: HTTPResponse.Status) async -> Response {
        if let token = Self.cookie(Self.sessionCookie, in: request), (try? await sessions.session(token)) != nil {
            return Self.redirect("/dashboard")
        }
        let csrf = sessions.signInFormToken()
        var response = render(
            "login", LoginView(csrf: csrf), title: "Sign in", session: nil, current: nil, problem: problem,
            status: status)
        response.headers[values: .setCookie] = [
            cookie(Self.loginCookie, csrf, maxAge: Int(sessions.formLifetime), for: request)
        ]
        return response
    }

    /// Signs in with an app's secret key (the session opens the apps whose secret key it is) or the
    /// operator key (every app). The request's address must not be waiting after too many
    /// failures (429 with `Retry-After`, the key unchecked); a wrong key counts against the
    /// address and the dashboard account, whose failures make failing addresses wait sooner but
    /// never hold up an address that has not failed.
    func login(_ request: Request, peer: SocketAddress?) async -> Response {
        guard let form = await Self.form(request) else {
            return await loginPage(request, problem: "The form could not be read.")
        }
        let source = throttle.source(of: request, peer: peer)
        do {
            if let until = try await throttle.lockedUntil([source]) {
                let refusal = throttle.refused([source], kind: .dashboard, until: until)
                return await waitPage(request, seconds: refusal.retryAfterSeconds ?? 1)
            }
        } catch {
            return unavailable(error, session: nil)
        }
        // Login CSRF: the form's token must match the cookie set with the form, be one this
        // deployment issued and not expired, and sign in once.
        guard let expected = Self.cookie(Self.loginCookie, in: request), let posted = form["csrf"],
            KakinServerHTTP.constantTimeEquals(expected, posted)
        else { return await loginPage(request, problem: "The sign-in form expired; try again.", status: .forbidden) }
        do {
            guard try await sessions.useSignInForm(posted) else {
                logger.warning("dashboard sign-in refused: the form's token is not valid, expired, or used")
                return await loginPage(request, problem: "The sign-in form expired; try again.", status: .forbidden)
            }
        } catch {
            return unavailable(error, session: nil)
        }
        guard let scope = scope(signedInBy: form["password"] ?? "") else {
            await throttle.failed([source, SignInSubject.dashboard], kind: .dashboard)
            return await loginPage(request, problem: "That is not an app's secret key or the operator key.")
        }
        await throttle.succeeded(source: source)
        let session: DashboardSessions.Session
        do { session = try await sessions.create(scope: scope) } catch { return unavailable(error, session: nil) }
        logger.info("dashboard sign-in", metadata: ["apps": "\(scope)"])
        var response = Self.redirect("/dashboard")
        response.headers[values: .setCookie] = [
            cookie(Self.sessionCookie, session.token, maxAge: configuration.sessionSeconds, for: request),
            cookie(Self.loginCookie, "", maxAge: 0, for: request),
        ]
        return response
    }

    /// The apps `key` opens: every app for the operator key; the apps whose secret key it is;
    /// `nil` for any other key. Compared in constant time with every key.
    func scope(signedInBy key: String) -> DashboardScope? {
        guard !key.isEmpty else { return nil }
        var isOperator = false
        if let operatorKey, KakinServerHTTP.constantTimeEquals(key, operatorKey) { isOperator = true }
        var apps: Set<String> = []
        for (secret, bundleID) in appKeys where KakinServerHTTP.constantTimeEquals(key, secret) {
            apps.insert(bundleID)
        }
        if isOperator { return .allApps }
        return apps.isEmpty ? nil : .apps(apps)
    }

    /// The configured apps a session opens, by bundle ID in order.
    func apps(of session: DashboardSessions.Session) -> [String] {
        session.scope.opened(service.apps.keys)
    }

    /// The apps a session opens whose purchases reconciliation can read from Apple.
    func reconcilableApps(_ session: DashboardSessions.Session) -> [String] {
        guard reconciliations != nil else { return [] }
        return session.scope.opened(service.apps.values.filter { $0.serverAPI != nil }.map(\.bundleID))
    }

    /// Whether a session may use the transaction manager: the sandbox sells an app it opens (or
    /// it opens every app).
    func opensSandbox(_ session: DashboardSessions.Session) -> Bool {
        guard sandbox != nil else { return false }
        if session.scope == .allApps { return true }
        return sandboxApp.map(session.scope.opens) ?? false
    }

    /// The sign-in page for an address that must wait: 429 with `Retry-After`.
    func waitPage(_ request: Request, seconds: Int) async -> Response {
        var response = await loginPage(
            request, problem: "Too many failed sign-ins. Try again in \(seconds) seconds.", status: .tooManyRequests)
        response.headers[.retryAfter] = "\(seconds)"
        return response
    }

    // MARK: - Guards

    /// What a page handler returns: the template, its data and the page's title.
    struct Page {
        var template: String
        var view: Any
        var title: String
        var current: String
    }

    /// Serves a page to a signed-in operator; everyone else is sent to the sign-in page.
    func page(_ request: Request, _ body: (DashboardSessions.Session) async throws -> Page) async -> Response {
        await signedIn(request) { session in
            let query = request.uri.queryParameters
            do {
                let page = try await body(session)
                return render(
                    page.template, page.view, title: page.title, session: session, current: page.current,
                    notice: query.get("notice"), problem: query.get("problem"))
            } catch let error as DashboardNotFound {
                return render(
                    "message", MessageView(heading: "Not found", text: error.message), title: "Not found",
                    session: session, current: nil, status: .notFound)
            } catch {
                logger.error("dashboard page failed", metadata: ["error": "\(error)"])
                return render(
                    "message", MessageView(heading: "Something went wrong", text: ServerError(error).message),
                    title: "Error", session: session, current: nil, status: .internalServerError)
            }
        }
    }

    /// Runs `body` with the session the request's cookie names; without one, sends the request
    /// to the sign-in page; when the ledger cannot be read, answers 503.
    func signedIn(
        _ request: Request, _ body: (DashboardSessions.Session) async -> Response
    ) async -> Response {
        guard let token = Self.cookie(Self.sessionCookie, in: request) else { return Self.redirect("/dashboard/login") }
        let session: DashboardSessions.Session?
        do { session = try await sessions.session(token) } catch { return unavailable(error, session: nil) }
        guard let session else { return Self.redirect("/dashboard/login") }
        return await body(session)
    }

    /// The page for a ledger that cannot be read or written now: 503, to try again.
    func unavailable(_ error: any Error, session: DashboardSessions.Session?) -> Response {
        logger.error("dashboard: the ledger is unavailable", metadata: ["error": "\(error)"])
        var response = render(
            "message", MessageView(heading: "Unavailable", text: "The ledger cannot be reached now; try again shortly."),
            title: "Unavailable", session: session, current: nil, status: .serviceUnavailable)
        response.headers[.retryAfter] = "5"
        return response
    }

    /// Runs a form's action for a signed-in operator whose form carries the session's CSRF token.
    func action(
        _ request: Request, _ body: (DashboardSessions.Session, [String: String]) async -> Response
    ) async -> Response {
        await signedIn(request) { session in
            guard let form = await Self.form(request) else {
                return render(
                    "message", MessageView(heading: "Bad request", text: "The form could not be read."),
                    title: "Bad request", session: session, current: nil, status: .badRequest)
            }
            guard let posted = form["csrf"], KakinServerHTTP.constantTimeEquals(posted, session.csrf) else {
                logger.warning("dashboard form refused: CSRF token missing or wrong")
                return render(
                    "message",
                    MessageView(heading: "Forbidden", text: "The form's security token is missing or stale; reload the page."),
                    title: "Forbidden", session: session, current: nil, status: .forbidden)
            }
            return await body(session, form)
        }
    }

    // MARK: - Rendering

    func render(
        _ template: String, _ view: Any, title: String, session: DashboardSessions.Session?, current: String?,
        notice: String? = nil, problem: String? = nil, status: HTTPResponse.Status = .ok
    ) -> Response {
        let body = library.render(PageContext(csrf: session?.csrf ?? "", page: view), withTemplate: template) ?? ""
        let layout = LayoutView(
            title: title, body: body, signedIn: session != nil, csrf: session?.csrf ?? "",
            hasSandbox: session.map(opensSandbox) ?? false,
            isOverview: current == "overview", isCustomers: current == "customers",
            isActivity: current == "activity", isRetention: current?.hasPrefix("retention") == true, isSandbox: current == "sandbox",
            notice: notice, problem: problem)
        let html = library.render(layout, withTemplate: "layout") ?? body
        return Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                HTTPField.Name("X-Frame-Options")!: "DENY",
                HTTPField.Name("Content-Security-Policy")!:
                    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'",
                HTTPField.Name("Referrer-Policy")!: "same-origin",
            ],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func redirect(_ location: String, notice: String? = nil, problem: String? = nil) -> Response {
        var target = location
        var items: [URLQueryItem] = []
        if let notice { items.append(URLQueryItem(name: "notice", value: notice)) }
        if let problem { items.append(URLQueryItem(name: "problem", value: problem)) }
        if !items.isEmpty, var components = URLComponents(string: location) {
            components.queryItems = (components.queryItems ?? []) + items
            target = components.percentEncodedQuery.map { "\(components.path)?\($0.replacingOccurrences(of: "+", with: "%2B"))" } ?? location
        }
        return Response(status: .seeOther, headers: [.location: target, .cacheControl: "no-store"])
    }

    /// A dashboard cookie (`HttpOnly`, `SameSite=Strict`, path `/dashboard`), `Secure` when the
    /// configuration says every cookie is (``KakinServer/DashboardConfiguration/secureCookies``,
    /// the default) or the request came over HTTPS; `maxAge` 0 removes it.
    func cookie(_ name: String, _ value: String, maxAge: Int, for request: Request) -> String {
        let secure =
            configuration.secureCookies
            || Self.cameOverHTTPS(request, trustForwardedProto: configuration.trustForwardedProto)
        return "\(name)=\(value); Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=\(maxAge)" + (secure ? "; Secure" : "")
    }

    /// Whether the request came over HTTPS: its scheme says so (a server serving TLS itself), or,
    /// when the configuration trusts the proxy in front, its `X-Forwarded-Proto`.
    static func cameOverHTTPS(_ request: Request, trustForwardedProto: Bool) -> Bool {
        if request.head.scheme?.lowercased() == "https" || request.uri.scheme == .https { return true }
        guard trustForwardedProto, let proto = request.headers[HTTPField.Name("X-Forwarded-Proto")!] else { return false }
        return proto.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).lowercased() == "https"
    }

    // MARK: - Request parsing

    /// A cookie's value.
    static func cookie(_ name: String, in request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                    return String(parts[1]).trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }

    /// An `application/x-www-form-urlencoded` body, at most ``maxFormBytes``; `nil` when unreadable.
    static func form(_ request: Request) async -> [String: String]? {
        guard let buffer = try? await request.body.collect(upTo: maxFormBytes) else { return nil }
        return parseForm(String(buffer: buffer))
    }

    static func parseForm(_ text: String) -> [String: String]? {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String? {
                part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
            guard let name = decode(parts[0]), let value = parts.count == 2 ? decode(parts[1]) : "" else {
                return nil
            }
            fields[name] = value
        }
        return fields
    }
}

/// A page asked for something that does not exist (an unknown customer, no sandbox).
struct DashboardNotFound: Error {
    let message: String
}

struct LayoutView {
    var title: String
    var body: String
    var signedIn: Bool
    var csrf: String
    var hasSandbox: Bool
    var isOverview: Bool
    var isCustomers: Bool
    var isActivity: Bool
    var isRetention: Bool
    var isSandbox: Bool
    var notice: String?
    var problem: String?
}

/// What a page's template sees: the page's own data, and the session's CSRF token for its forms.
struct PageContext {
    var csrf: String
    var page: Any
}

struct LoginView {
    var csrf: String
}

struct MessageView {
    var heading: String
    var text: String
}
