import Foundation
import Testing

@testable import KakinServer

@Suite("Stripe: the form encoding of parameters")
struct StripeFormTests {
    @Test func nestedNamesUseStripesBracketsInOrder() {
        var form = StripeForm()
        form.append("cus_1", at: "customer")
        form.append("plan_monthly", at: "items", "0", "plan")
        form.append(list: ["latest_invoice", "customer"], at: "expand")
        form.append(metadata: ["kakin_purchase": "p1", "kakin_customer": "c1"])
        #expect(
            form.body
                == "customer=cus_1&items[0][plan]=plan_monthly&expand[]=latest_invoice&expand[]=customer"
                + "&metadata[kakin_customer]=c1&metadata[kakin_purchase]=p1")
    }

    @Test func aQueryPercentEncodesTheBrackets() {
        var form = StripeForm()
        form.append("invoice.paid", at: "type")
        form.append(Date(timeIntervalSince1970: 1_700_000_000.9), at: "created", "gt")
        #expect(form.query == "type=invoice.paid&created%5Bgt%5D=1700000000")
        #expect(form.body == "type=invoice.paid&created[gt]=1700000000")
    }

    @Test func onlyUnreservedCharactersAreLeftAsTheyAre() {
        var form = StripeForm()
        form.append("a b+c&d=e/f?é~-._AZaz09", at: "description")
        #expect(form.body == "description=a%20b%2Bc%26d%3De%2Ff%3F%C3%A9~-._AZaz09")
    }

    @Test func namesArePercentEncodedInsideTheirBrackets() {
        var form = StripeForm()
        form.append(metadata: ["odd key[0]": "x\n"])
        #expect(form.body == "metadata[odd%20key%5B0%5D]=x%0A")
    }

    @Test func nilValuesAddNothingAndOthersAreWrittenAsStripeReadsThem() {
        var form = StripeForm()
        form.append(nil as String?, at: "email")
        form.append(nil as Int?, at: "amount")
        form.append(nil as Date?, at: "trial_end")
        form.append(list: [], at: "expand")
        form.append(metadata: [:])
        #expect(form.isEmpty)
        form.append(true, at: "confirm")
        form.append(false, at: "cancel_at_period_end")
        form.append(-5, at: "amount")
        #expect(form.body == "confirm=true&cancel_at_period_end=false&amount=-5")
    }
}
