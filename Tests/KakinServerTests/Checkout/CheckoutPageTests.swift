import Foundation
import Testing

@testable import KakinServer

@Suite("Checkout: the page")
struct CheckoutPageTests {
    static func page(name: String = "Unlock", returnURL: String = "myapp://checkout") -> CheckoutPage {
        CheckoutPage(
            productName: name, priceText: "$9.99", trialText: nil, publishableKey: "pk_test_\"><x>",
            stripeJS: URL(string: "http://127.0.0.1:4242/js.stripe.com/v3/")!,
            stripeAPI: URL(string: "http://127.0.0.1:4242")!, sendsCardToken: true, payPath: "/checkout/com.example.kakin/pay",
            fields: ["appUserId": "<script>alert(1)</script>", "signature": "abc"], productID: "com.example.kakin.unlock",
            returnURL: returnURL)
    }

    @Test func everyValueIsEscaped() {
        let html = Self.page(name: #"<img src=x onerror="alert(1)">&'"#, returnURL: #"myapp://checkout?a="><script>"#).html
        #expect(!html.contains("<img"))
        #expect(html.contains("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;"))
        #expect(!html.contains("<script>alert"))
        #expect(!html.contains(#""><x>"#))
        #expect(html.contains(#"data-return="myapp://checkout?a=&quot;&gt;&lt;script&gt;""#))
        // Two scripts only: Stripe.js and the page's own.
        #expect(html.components(separatedBy: "<script").count == 3)
    }

    @Test func thePolicyAllowsThePagesOwnScriptAndTheEmulatorsOrigin() {
        let page = Self.page()
        let policy = page.contentSecurityPolicy
        #expect(policy.contains("script-src \(CheckoutPage.hashSource(CheckoutPage.script)) http://127.0.0.1:4242;"))
        #expect(policy.contains("connect-src 'self' http://127.0.0.1:4242;"))
        #expect(policy.contains("frame-ancestors 'none'"))
        #expect(page.html.contains("<script>\(CheckoutPage.script)</script>"))
        #expect(page.html.contains("<style>\(CheckoutPage.style)</style>"))
    }

    @Test func pricesAreFormattedForTheCustomersLanguage() {
        #expect(CheckoutPrice.format(amount: 999, currency: "usd", locale: CheckoutPrice.locale(acceptLanguage: "en-US")) == "$9.99")
        let yen = CheckoutPrice.format(amount: 1200, currency: "jpy", locale: CheckoutPrice.locale(acceptLanguage: "ja-JP,ja;q=0.9"))
        #expect(yen.contains("1,200"))
        #expect(yen.contains("¥") || yen.contains("￥"))
        #expect(!yen.contains("."))
        #expect(CheckoutPrice.format(amount: 1234, currency: "kwd", locale: Locale(identifier: "en_US")).contains("1.234"))
        #expect(CheckoutPrice.locale(acceptLanguage: nil).identifier == "en_US")
        #expect(CheckoutPrice.locale(acceptLanguage: "<script>").identifier == "en_US")
        #expect(CheckoutPrice.period(.init(interval: "month", intervalCount: 3)) == "3 months")
    }

    @Test func theJapanesePageShowsYen() async throws {
        let server = try await CheckoutServer()
        let checkout = WebCheckout(service: server.service)
        let app = try server.service.app(CheckoutServer.bundleID)
        let offer = try await checkout.offer(app, productID: "com.example.kakin.credits5")
        #expect(offer.kind == .payment)
        #expect(offer.amount == 1200)
        #expect(offer.price.currency == "jpy")
        let monthly = try await checkout.offer(app, productID: CheckoutServer.monthly)
        #expect(monthly.kind == .subscription)
        #expect(checkout.productName(CheckoutServer.unlock, app: app, locale: "en_US") != CheckoutServer.unlock)
        #expect(checkout.productName("com.example.kakin.nothing", app: app, locale: "en_US") == "com.example.kakin.nothing")
    }
}
