import Foundation
import HTTPTypes
import Hummingbird
import KakinHTTP
import KakinWire

/// The web checkout's routes: a signed link for a customer (publishable key, and the customer's
/// token where the app requires one, as every customer route), the page the link opens (no key:
/// the link's signature is the authority) and the payment that page asks for (the same signed
/// fields in its body).
struct CheckoutController: RouteController {
    let service: PurchaseService
    let reader: RequestReader
    let checkout: WebCheckout

    func addRoutes(to routes: inout RouteTable) {
        routes.on(.checkoutLinks()) { request, context in
            let caller = try context.caller(secret: false)
            let app = try caller.app(try RequestReader.pathParameter(context, "bundle"), in: service)
            let body = try await reader.decode(CheckoutLinkRequest.self, from: request)
            let user = try await caller.customer(body.appUserId, of: app, request: request, service: service)
            let answer = try await checkout.link(
                app, appUserID: user, productID: body.productId, returnURL: body.returnUrl,
                origin: try Self.origin(of: request))
            return JSONBody.response(answer, headers: [.cacheControl: "no-store"])
        }
        routes.on(.checkoutPage()) { request, context in
            do {
                let bundleID = try RequestReader.pathParameter(context, "bundle")
                var fields: [String: String] = [:]
                for (name, value) in request.uri.queryParameters { fields[String(name)] = String(value) }
                let (app, link, _) = try checkout.verify(fields, bundleID: bundleID)
                let offer = try await checkout.offer(app, productID: link.productID)
                let acceptLanguage = request.headers[.acceptLanguage]
                let locale = CheckoutPrice.locale(acceptLanguage: acceptLanguage)
                var price = CheckoutPrice.format(amount: offer.amount, currency: offer.price.currency, locale: locale)
                if offer.kind == .subscription, let recurring = offer.price.recurring {
                    price += recurring.intervalCount == 1 ? " per " : " every "
                    price += CheckoutPrice.period(recurring)
                }
                let page = CheckoutPage(
                    productName: checkout.productName(link.productID, app: app, locale: locale.identifier),
                    priceText: price,
                    trialText: offer.kind == .subscription
                        ? offer.product.trialDays.map { "Free for \($0) day\($0 == 1 ? "" : "s")" } : nil,
                    publishableKey: offer.account.publishableKey ?? "", stripeJS: offer.account.stripeJSURL,
                    stripeAPI: offer.account.apiBase, sendsCardToken: !offer.account.isStripeHost,
                    payPath: KakinRoute.checkoutPay(bundleID).path, fields: fields, productID: link.productID,
                    returnURL: link.returnURL)
                return Self.html(page.html, status: .ok, policy: page.contentSecurityPolicy)
            } catch {
                return Self.errorPage(ServerError(error))
            }
        }
        routes.on(.checkoutPay()) { request, context in
            let bundleID = try RequestReader.pathParameter(context, "bundle")
            let body = try await reader.decode(WebCheckout.PayRequest.self, from: request)
            return JSONBody.response(try await checkout.pay(body, bundleID: bundleID), headers: [.cacheControl: "no-store"])
        }
    }

    /// `scheme://host` the request was sent to, from its `Host` (the scheme from
    /// `X-Forwarded-Proto` behind a proxy; plain HTTP only on this machine): where the link
    /// points. A caller who sends another `Host` gets a link to that host, for itself alone.
    static func origin(of request: Request) throws(ServerError) -> String {
        guard let host = request.head.authority ?? request.headers[HTTPField.Name("Host")!], !host.isEmpty,
            host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" && $0 != "@" && $0 != "?" && $0 != "#" })
        else { throw ServerError(.invalidRequest, "the request has no Host to make the link's URL from") }
        let forwarded = request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased()
        let local = host.hasPrefix("127.0.0.1") || host.hasPrefix("localhost") || host.hasPrefix("[::1]")
        let scheme = forwarded == "https" || forwarded == "http" ? forwarded! : local ? "http" : "https"
        return "\(scheme)://\(host)"
    }

    /// An HTML answer that is never cached, framed, or sniffed, under `policy`.
    static func html(_ text: String, status: HTTPResponse.Status, policy: String) -> Response {
        Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                .contentSecurityPolicy: policy, HTTPField.Name("X-Content-Type-Options")!: "nosniff",
                HTTPField.Name("Referrer-Policy")!: "no-referrer",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// The page of a link that cannot be used: 410 for an expired link, 403 for a forged or
    /// incomplete one, the error's own status for anything else.
    static func errorPage(_ error: ServerError) -> Response {
        let (title, message): (String, String) =
            switch error.code {
            case .linkExpired: ("This link has expired", "Go back to the app and start the purchase again.")
            case .forbidden: ("This link is not valid", "Go back to the app and start the purchase again.")
            case .notFound, .unknownApp, .notConfigured: ("Not available", "This product cannot be bought here.")
            default: ("Something went wrong", "The checkout cannot be shown now. Try again in a moment.")
            }
        return html(
            CheckoutPage.errorHTML(title: title, message: message), status: error.status,
            policy: CheckoutPage.errorContentSecurityPolicy)
    }
}
