import Crypto
import Foundation
import KakinHTTP

/// The web checkout's pages, rendered on the server: the page that takes the card, and the page
/// that says why a link cannot be used. Every value is escaped; the page's script and style are
/// fixed, and its Content-Security-Policy allows them by their SHA-256 hashes, Stripe.js from
/// its origin, and requests to this server and to Stripe's API only.
struct CheckoutPage: Sendable {
    /// The product's name.
    var productName: String
    /// The price as the customer reads it (`$9.99`), with its period for a subscription
    /// (`$9.99 per month`).
    var priceText: String
    /// The trial, in words, when the subscription starts with one.
    var trialText: String?
    /// The account's publishable key.
    var publishableKey: String
    /// Where Stripe.js is loaded from.
    var stripeJS: URL
    /// The origin of Stripe's API, which Stripe.js calls from the page.
    var stripeAPI: URL
    /// Whether the page sends the card's token to the server (an emulator) instead of confirming
    /// with Stripe.js.
    var sendsCardToken: Bool
    /// The path the page posts the payment to.
    var payPath: String
    /// The signed link's fields, posted back with the payment.
    var fields: [String: String]
    /// The product's ID, added to the return URL.
    var productID: String
    /// Where the customer goes once paid.
    var returnURL: String

    /// The page's HTML.
    var html: String {
        let link = String(decoding: JSONBody.encode(fields), as: UTF8.self)
        let price = trialText.map { "\($0), then \(priceText)" } ?? priceText
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(Self.escape(productName))</title>
            <style>\(Self.style)</style>
            </head>
            <body>
            <main id="checkout" data-key="\(Self.escape(publishableKey))" data-pay="\(Self.escape(payPath))" \
            data-link="\(Self.escape(link))" data-product="\(Self.escape(productID))" \
            data-return="\(Self.escape(returnURL))" data-card-flow="\(sendsCardToken ? "token" : "confirm")">
            <h1 id="product">\(Self.escape(productName))</h1>
            <p id="price">\(Self.escape(price))</p>
            <form id="pay-form">
            <div id="card"></div>
            <p id="error" role="alert"></p>
            <button id="pay" type="submit">Pay</button>
            </form>
            </main>
            <script src="\(Self.escape(stripeJS.absoluteString))"></script>
            <script>\(Self.script)</script>
            </body>
            </html>

            """
    }

    /// The Content-Security-Policy of the page: nothing by default; its own script and style by
    /// hash; Stripe.js from its origin; requests to this server and Stripe's API; Stripe's frames.
    var contentSecurityPolicy: String {
        let js = Self.origin(stripeJS)
        let api = Self.origin(stripeAPI)
        let frames = js == "https://js.stripe.com" ? "\(js) https://hooks.stripe.com" : js
        return [
            "default-src 'none'", "script-src \(Self.scriptHash) \(js)", "style-src \(Self.styleHash)",
            "connect-src 'self' \(api)", "frame-src \(frames)", "img-src 'self' data:", "base-uri 'none'",
            "form-action 'none'", "frame-ancestors 'none'",
        ].joined(separator: "; ")
    }

    /// A page saying why the checkout cannot go on (a stale or forged link).
    static func errorHTML(title: String, message: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>\(style)</style>
        </head>
        <body>
        <main id="checkout-error">
        <h1>\(escape(title))</h1>
        <p>\(escape(message))</p>
        </main>
        </body>
        </html>

        """
    }

    /// The policy of an error page: its style only.
    static let errorContentSecurityPolicy =
        "default-src 'none'; style-src \(styleHash); base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// `text` with the characters HTML gives a meaning written as references (``HTMLText/escape(_:)``).
    static func escape(_ text: String) -> String { HTMLText.escape(text) }

    /// `scheme://host[:port]` of `url`.
    static func origin(_ url: URL) -> String {
        "\(url.scheme ?? "https")://\(url.host ?? "")" + (url.port.map { ":\($0)" } ?? "")
    }

    /// A CSP hash source for `text`: `'sha256-<base64>'`.
    static func hashSource(_ text: String) -> String {
        "'sha256-\(Data(SHA256.hash(data: Data(text.utf8))).base64EncodedString())'"
    }

    static let scriptHash = hashSource(script)
    static let styleHash = hashSource(style)

    /// The page's style.
    static let style = """
        body{font-family:-apple-system,system-ui,sans-serif;margin:0;padding:2rem;background:#f6f6f8;color:#1d1d1f}\
        main{max-width:28rem;margin:0 auto;background:#fff;padding:1.5rem;border-radius:12px}\
        h1{font-size:1.4rem;margin:0 0 .5rem}#price{font-size:1.1rem;margin:0 0 1.5rem}\
        #card{padding:.75rem;border:1px solid #ccc;border-radius:8px;margin-bottom:1rem}\
        #error{color:#b00020;min-height:1.2em}\
        button{width:100%;padding:.8rem;font-size:1rem;border:0;border-radius:8px;background:#0a64d8;color:#fff}\
        button:disabled{opacity:.6}
        """

    /// The page's script: mounts Stripe.js's card element; on submit, asks the server to start
    /// the payment (once, whatever the clicks), confirms it with Stripe.js (or, against an
    /// emulator, sends the card's token with the request), then goes to the return URL with
    /// `status=succeeded&product=<id>`; a refused card is shown on the page.
    static let script = """
        (function () {
          "use strict";
          var main = document.getElementById("checkout");
          var data = main.dataset;
          var stripe = Stripe(data.key);
          var card = stripe.elements().create("card");
          card.mount("#card");
          var form = document.getElementById("pay-form");
          var button = document.getElementById("pay");
          var error = document.getElementById("error");
          function fail(message) {
            error.textContent = message || "The payment did not go through.";
            button.disabled = false;
          }
          function done() {
            var target = data["return"];
            var hash = "";
            var at = target.indexOf("#");
            if (at >= 0) { hash = target.slice(at); target = target.slice(0, at); }
            target += (target.indexOf("?") >= 0 ? "&" : "?") + "status=succeeded&product=" +
              encodeURIComponent(data.product) + hash;
            window.location.assign(target);
          }
          function post(extra) {
            var body = JSON.parse(data.link);
            Object.keys(extra).forEach(function (k) { body[k] = extra[k]; });
            return fetch(data.pay, {
              method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)
            }).then(function (response) {
              return response.json().then(function (answer) {
                if (!response.ok) { throw new Error((answer.error && answer.error.message) || "The payment failed."); }
                return answer;
              });
            });
          }
          function finish(result) {
            if (result.error) { fail(result.error.message); return; }
            var intent = result.paymentIntent || result.setupIntent;
            if (intent && intent.status !== "succeeded" && intent.status !== "processing") {
              fail("The payment did not go through (" + intent.status + ").");
              return;
            }
            done();
          }
          function confirmed(answer, withCard) {
            if (answer.status === "succeeded" || answer.status === "active" || (answer.kind === "setup" && !answer.clientSecret)) {
              done();
            } else if (answer.kind === "setup" && answer.clientSecret) {
              return stripe.confirmCardSetup(answer.clientSecret, {payment_method: {card: card}}).then(finish);
            } else if (answer.clientSecret) {
              return stripe.confirmCardPayment(answer.clientSecret, withCard ? {payment_method: {card: card}} : {}).then(finish);
            } else {
              fail("The payment could not be started.");
            }
          }
          form.addEventListener("submit", function (event) {
            event.preventDefault();
            if (button.disabled) { return; }
            button.disabled = true;
            error.textContent = "";
            var started;
            if (data.cardFlow === "token") {
              started = stripe.createToken(card).then(function (result) {
                if (result.error) { throw new Error(result.error.message || "The card was refused."); }
                return post({cardToken: result.token.id});
              }).then(function (answer) { return confirmed(answer, false); });
            } else {
              started = post({}).then(function (answer) { return confirmed(answer, true); });
            }
            started.catch(function (problem) { fail(problem && problem.message); });
          });
        })();
        """
}
