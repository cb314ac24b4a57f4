import AppStoreModels
import AppStoreSecurity
public import Crypto
import Foundation
import KakinLedger
import HTTPTypes
public import Hummingbird
import KakinHTTP
import KakinWire
public import Logging

/// The purchase server's HTTP API. Every route answers JSON; failures answer
/// `{"error": {"code", "message", "retryable", "cause"?, "appleStatus"?}}` with the status of the error.
///
/// Order of checks on every keyed route: the key (headers only) first, then the bundle ID, then
/// the body. A caller without a valid key learns nothing about which apps the server has.
public struct KakinServerHTTP: Sendable {
    /// The core.
    public let service: PurchaseService
    /// Signs customer responses so the SDK can detect tampering (header `X-Kakin-Signature`).
    public let signingKey: P256.Signing.PrivateKey
    /// The largest request body accepted (content uploads excepted); larger ones get 413.
    public let maxBodySize: Int
    /// The largest content package accepted.
    public let maxContentSize: Int
    /// Runs reconciliations on demand (`POST /v1/admin/reconcile`).
    public let reconciliations: ReconciliationRunner?
    /// The `.storekit` catalog served at `/v1/catalog` for apps that have none of their own.
    public let catalog: StoreKitConfiguration?
    /// Request, verification and ledger metrics, served at `/metrics`.
    public let metrics: ServerMetrics
    /// Where the one-line-per-request log goes.
    public let logger: Logger
    /// Counts wrong keys and makes their addresses wait.
    public let signInThrottle: SignInThrottle
    /// Limits the publishable-key requests of each client address.
    public let rateLimiter: ClientRateLimiter
    /// Who may read `/metrics`, and on which listener.
    public let operations: OperationsConfiguration

    /// Creates the API over `service`. Without a `signInThrottle`, one of its own counts wrong keys
    /// in the same ledger.
    public init(
        service: PurchaseService, signingKey: P256.Signing.PrivateKey, reconciliations: ReconciliationRunner? = nil,
        catalog: StoreKitConfiguration? = nil, maxBodySize: Int = 256 * 1024, maxContentSize: Int = 512 * 1024 * 1024,
        metrics: ServerMetrics = ServerMetrics(), logger: Logger = KakinServerHTTP.quietLogger,
        signInThrottle: SignInThrottle? = nil, rateLimits: RateLimitPolicy = RateLimitPolicy(),
        operations: OperationsConfiguration = OperationsConfiguration(), uptime: (@Sendable () -> Double)? = nil
    ) {
        self.rateLimiter = ClientRateLimiter(policy: rateLimits, uptime: uptime)
        self.operations = operations
        self.service = service
        self.reconciliations = reconciliations
        self.catalog = catalog
        self.signingKey = signingKey
        self.maxBodySize = maxBodySize
        self.maxContentSize = maxContentSize
        self.metrics = metrics
        self.logger = logger
        self.signInThrottle =
            signInThrottle
            ?? SignInThrottle(service: service, metrics: metrics, logger: logger, now: service.now)
    }

    /// A logger that reports errors only: the default when the caller gives none (tests, embedding).
    public static var quietLogger: Logger {
        var logger = Logger(label: "kakin.http")
        logger.logLevel = .error
        return logger
    }

    /// All routes, behind the request log and metrics middleware and the key middleware; a known
    /// path asked with another method answers 405 with `Allow`.
    public func router() -> Router<KakinRequestContext> {
        routerAndRoutes().router
    }

    /// The router, and the paths and methods its routes answer (the 405 answers aside).
    func routerAndRoutes() -> (router: Router<KakinRequestContext>, routes: [(path: String, methods: [HTTPRequest.Method])]) {
        let router = Router(context: KakinRequestContext.self)
        router.add(middleware: RequestObservationMiddleware<KakinRequestContext>(metrics: metrics, logger: logger))
        router.add(middleware: ErrorMiddleware<KakinRequestContext>(metrics: metrics, logger: logger))
        OperationsController.guardMetrics(on: router, operations)
        router.add(
            middleware: KeyMiddleware(apps: Array(service.apps.values), throttle: signInThrottle, limiter: rateLimiter))
        var routes = RouteTable(router: router)
        let reader = RequestReader(maxBodySize: maxBodySize)
        let answers = CustomerAnswerSigner(service: service, signingKey: signingKey)
        routes.add(
            OperationsController(
                service: service, metrics: metrics, serverKey: signingKey.publicKey, operations: operations,
                logger: logger))
        routes.add(PurchaseController(service: service, reader: reader, answers: answers))
        routes.add(CustomerController(service: service, reader: reader, answers: answers))
        routes.add(
            CheckoutController(service: service, reader: reader, checkout: WebCheckout(service: service, catalog: catalog)))
        routes.add(ContentController(service: service, maxContentSize: maxContentSize))
        routes.add(CatalogController(service: service, catalog: catalog))
        routes.add(AdminController(service: service, reconciliations: reconciliations))
        routes.add(MetricsController(service: service))
        routes.addMethodNotAllowed()
        return (router, routes.methods)
    }

    // MARK: - Keys

    /// Who is calling: the apps whose key was presented.
    struct Caller {
        /// The apps whose publishable or secret key the request presented.
        var bundleIDs: Set<String>
        /// The apps whose secret key the request presented: their backends, which may read and do
        /// what a customer's device may not.
        var secretBundleIDs: Set<String> = []

        /// Whether the caller holds `app`'s secret key.
        func isBackend(of app: AppConfiguration) -> Bool {
            secretBundleIDs.contains(app.bundleID)
        }

        /// The app `bundleID`, if the caller's key is one of its keys. An unknown bundle ID is 404
        /// only for a caller who holds a valid key; everyone else got 401 before this.
        func app(_ bundleID: String, in service: PurchaseService) throws(ServerError) -> AppConfiguration {
            guard bundleIDs.contains(bundleID) else {
                if service.apps[bundleID] == nil {
                    throw ServerError(.unknownApp, "no app is configured for \(bundleID)")
                }
                throw ServerError(.unauthorized, "this key is not a key of \(bundleID)")
            }
            return try service.app(bundleID)
        }
    }

    /// Whether two secrets are equal, compared in time that depends only on their lengths.
    package static func constantTimeEquals(_ left: String, _ right: String) -> Bool {
        let a = Array(left.utf8)
        let b = Array(right.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
