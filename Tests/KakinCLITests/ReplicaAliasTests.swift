import Foundation
import KakinCore
import KakinWire
import Testing

@testable import KakinServer
@testable import KakinLedger

extension ReplicaTests {
    /// The customer as `url` answers for `user`: its ID and points.
    static func points(of user: String, at url: String) async throws -> (appUserID: String, points: Int?) {
        let encoded = KakinRoute.encode(user)
        let answer = try await exchange(
            "GET", "\(url)/v1/customers/\(encoded)?bundleId=\(ServerCommandTests.bundleID)", headers: appKey)
        let customer = try #require(answer.body["customer"] as? [String: Any], "\(answer.body)")
        let balances = customer["balances"] as? [String: Any]
        return (customer["appUserId"] as? String ?? "", (balances?["points"] as? NSNumber)?.intValue)
    }

    /// Several replicas asked at once to make one anonymous customer two different identified ones:
    /// one alias wins everywhere, its purchases move once, and uploads and reads that still name
    /// the anonymous ID reach the identified customer on every replica.
    @Test(.enabled(if: enabled, "\(skipMessage)"))
    func replicasAgreeOnWhoAnAnonymousCustomerBecame() async throws {
        try await Self.withReplicas(purchases: 4, tester: "aliased") { cluster in
            let urls = cluster.urls
            let anonymous = AnonymousAppUserID.make()
            #expect(await Self.post(cluster.purchases[0].jws, user: anonymous, to: urls[0]) == 200)
            #expect(await Self.post(cluster.purchases[1].jws, user: anonymous, to: urls[1]) == 200)

            let statuses = try await withThrowingTaskGroup(of: (target: String, status: Int).self) { group in
                for index in 0..<6 {
                    let target = index % 2 == 0 ? "member-a" : "member-b"
                    let url = urls[index % urls.count]
                    group.addTask {
                        let answer = try await exchange(
                            "POST", "\(url)/v1/customers/\(KakinRoute.encode(anonymous))/alias", headers: Self.appKey,
                            json: ["bundleId": ServerCommandTests.bundleID, "appUserId": target])
                        return (target, answer.status)
                    }
                }
                var all: [(target: String, status: Int)] = []
                for try await result in group { all.append(result) }
                return all
            }
            let winner = try #require(
                try await cluster.store.aliasedCustomer(bundleID: ServerCommandTests.bundleID, anonymousID: anonymous))
            for (target, status) in statuses {
                #expect(status == (target == winner ? 200 : 409), "\(statuses)")
            }

            // Every replica reads the same customer under both IDs.
            for url in urls {
                for user in [anonymous, winner] {
                    let read = try await Self.points(of: user, at: url)
                    #expect(read.appUserID == winner && read.points == 200, "\(user) at \(url)")
                }
            }
            // An upload that still names the anonymous customer reaches the identified one. A refusal
            // shows the answer and the end of what the replica logged.
            for (purchase, user, replica) in [(2, anonymous, 2), (3, winner, 0)] {
                let upload = await Self.upload(cluster.purchases[purchase].jws, user: user, to: urls[replica])
                let log = cluster.replicas[replica].output + cluster.replicas[replica].errors
                #expect(upload.status == 200, "\(upload.answer)\n\(log.suffix(4000))")
            }
            for url in urls { #expect(try await Self.points(of: winner, at: url).points == 400) }

            let ledger = try await cluster.store.customer(bundleID: ServerCommandTests.bundleID, appUserID: winner)
            #expect(ledger.balances == ["points": 400])
            #expect(ledger.ledger.reduce(0) { $0 + $1.amount } == 400)
            let left = try await cluster.store.customer(bundleID: ServerCommandTests.bundleID, appUserID: anonymous)
            #expect(left.transactions.isEmpty && left.balances.isEmpty && left.ledger.isEmpty)
            // A claim passes over the events another claim holds locked at that moment (on PostgreSQL,
            // a replica's delivery job taking them for its own endpoint), and each look leases what
            // it returns: the looks go on until the alias's event is among what they took.
            var aliased: [LedgerEvent] = []
            for _ in 0..<50 where aliased.isEmpty {
                aliased += try await cluster.store.dueEvents(
                    endpoint: "https://unused.example/hook", now: Date().addingTimeInterval(60), limit: 1000
                ).filter { $0.type == "customer.aliased" }
            }
            #expect(aliased.count == 1, "one alias, recorded once")
        }
    }
}
