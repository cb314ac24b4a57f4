/// The dashboard's Mustache templates and its one style sheet, compiled into the server so that
/// the binary needs no resource files. `{{name}}` escapes HTML; `{{{name}}}` is used only for
/// markup the dashboard made itself (a rendered page body, an SVG chart).
enum DashboardTemplates {
    static let all: [String: String] = [
        "layout": layout, "login": login, "overview": overview, "customers": customers, "customer": customer,
        "activity": activity, "sandbox": sandbox, "message": message,
    ]

    static let layout = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Kakin</title>
        <link rel="stylesheet" href="/dashboard/assets/dashboard.css">
        </head>
        <body>
        <header class="top">
          <a class="brand" href="/dashboard">Kakin</a>
          {{#signedIn}}
          <nav>
            <a href="/dashboard"{{#isOverview}} aria-current="page"{{/isOverview}}>Overview</a>
            <a href="/dashboard/customers"{{#isCustomers}} aria-current="page"{{/isCustomers}}>Customers</a>
            <a href="/dashboard/activity"{{#isActivity}} aria-current="page"{{/isActivity}}>Activity</a>
            {{#hasSandbox}}<a href="/dashboard/sandbox"{{#isSandbox}} aria-current="page"{{/isSandbox}}>Transaction manager</a>{{/hasSandbox}}
          </nav>
          <form method="post" action="/dashboard/logout" class="logout">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <button type="submit">Sign out</button>
          </form>
          {{/signedIn}}
        </header>
        <main>
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#problem}}<p class="problem" role="alert">{{problem}}</p>{{/problem}}
        {{{body}}}
        </main>
        </body>
        </html>
        """

    static let login = """
        <section class="login card">
          <h1>Sign in</h1>
          <p>Use the server's secret key (<code>sk_…</code>) or the dashboard's admin password.</p>
          <form method="post" action="/dashboard/login">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <label for="password">Secret key or admin password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
            <button type="submit">Sign in</button>
          </form>
        </section>
        """

    static let overview = """
        <h1>Overview</h1>
        <p class="muted">The last {{days}} days, to {{today}} (UTC).</p>
        {{#apps}}
        <section class="card app">
          <h2>{{bundleID}}</h2>
          <div class="figures">
            <div><span class="figure" data-figure="purchases">{{purchases}}</span><span>purchases</span></div>
            <div><span class="figure" data-figure="refunds">{{refunds}}</span><span>refunds and revocations</span></div>
            <div><span class="figure" data-figure="active">{{activeSubscriptions}}</span><span>active subscriptions</span></div>
            {{#revenueTotals}}<div><span class="figure">{{amount}}</span><span>revenue, {{currency}}</span></div>{{/revenueTotals}}
          </div>
          {{#revenueCharts}}
          <figure>
            <figcaption>Revenue per day, {{currency}}</figcaption>
            {{{svg}}}
          </figure>
          {{/revenueCharts}}
          {{^revenueCharts}}<p class="muted">No priced purchases in this period.</p>{{/revenueCharts}}
          <figure>
            <figcaption>Active subscriptions per day</figcaption>
            {{{subscriptionsSVG}}}
          </figure>
        </section>
        {{/apps}}
        """

    static let customers = """
        <h1>Customers</h1>
        <form method="get" action="/dashboard/customers" class="search">
          <label for="q">App user ID, transaction ID or original transaction ID</label>
          <div class="row">
            <input id="q" name="q" type="search" value="{{query}}" placeholder="alice or 2000000000000001">
            <button type="submit">Search</button>
          </div>
        </form>
        <h2>{{heading}}</h2>
        {{#hasMatches}}
        <div class="scroll"><table>
          <thead><tr><th>Customer</th><th>App</th><th>Transactions</th><th>Last purchase</th></tr></thead>
          <tbody>
          {{#matches}}
          <tr><td><a class="customer-link" href="{{link}}">{{appUserID}}</a></td><td>{{bundleID}}</td><td>{{transactionCount}}</td><td>{{lastPurchase}}</td></tr>
          {{/matches}}
          </tbody>
        </table></div>
        {{/hasMatches}}
        {{^matches}}<p class="muted">No customer matches.</p>{{/matches}}
        """

    static let customer = """
        <h1>Customer <code>{{appUserID}}</code></h1>
        <p class="muted">{{bundleID}} · {{transactionCount}} transactions</p>
        <div class="columns">
        <section class="card">
          <h2>Entitlements</h2>
          {{#hasEntitlements}}
          <ul class="plain" id="entitlements">
            {{#entitlements}}
            <li class="entitlement {{state}}" data-entitlement="{{identifier}}" data-state="{{state}}"><strong>{{identifier}}</strong> <span class="badge {{state}}">{{state}}</span><br><span class="muted">{{productID}}{{#until}} · until {{until}}{{/until}}</span></li>
            {{/entitlements}}
          </ul>
          {{/hasEntitlements}}
          {{^entitlements}}<p class="muted">None.</p>{{/entitlements}}
        </section>
        <section class="card">
          <h2>Balances</h2>
          {{#hasBalances}}
          <ul class="plain">{{#balances}}<li><strong>{{currency}}</strong> {{amount}}</li>{{/balances}}</ul>
          {{/hasBalances}}
          {{^balances}}<p class="muted">None.</p>{{/balances}}
        </section>
        </div>
        <section class="card">
          <h2>Timeline</h2>
          <div class="scroll"><table class="timeline">
            <thead><tr><th>When</th><th>What</th><th>Details</th></tr></thead>
            <tbody>
            {{#timeline}}
            <tr class="{{kind}}"><td class="nowrap">{{date}}</td><td><span class="badge {{kind}}">{{label}}</span></td><td class="details">{{details}}</td></tr>
            {{/timeline}}
            </tbody>
          </table></div>
        </section>
        """

    static let activity = """
        <h1>Activity</h1>
        <section class="card">
          <h2>Notifications received</h2>
          {{#hasNotifications}}
          <div class="scroll"><table>
            <thead><tr><th>Received</th><th>Type</th><th>Subtype</th><th>Outcome</th><th>Transaction</th></tr></thead>
            <tbody>
            {{#notifications}}
            <tr><td class="nowrap">{{receivedAt}}</td><td>{{type}}</td><td>{{subtype}}</td><td>{{outcome}}</td><td><code>{{transactionID}}</code></td></tr>
            {{/notifications}}
            </tbody>
          </table></div>
          {{/hasNotifications}}
          {{^notifications}}<p class="muted">None yet.</p>{{/notifications}}
        </section>
        <section class="card">
          <h2>Webhook deliveries</h2>
          {{^endpoints}}<p class="muted">No webhook endpoint is configured; events wait in the outbox.</p>{{/endpoints}}
          {{#hasDeliveries}}
          <div class="scroll"><table>
            <thead><tr><th>Event</th><th>Type</th><th>Customer</th><th>Endpoint</th><th>State</th><th>Attempts</th></tr></thead>
            <tbody>
            {{#deliveries}}
            <tr><td>#{{eventID}} <span class="muted">{{createdAt}}</span></td><td>{{type}}</td><td>{{appUserID}}</td><td class="details">{{endpoint}}</td><td><span class="badge {{stateClass}}">{{state}}</span></td><td>{{attempts}}</td></tr>
            {{/deliveries}}
            </tbody>
          </table></div>
          {{/hasDeliveries}}
          {{^deliveries}}<p class="muted">No events yet.</p>{{/deliveries}}
        </section>
        <section class="card">
          <h2>Reconciliation runs</h2>
          {{#canReconcile}}
          <form method="post" action="/dashboard/reconcile" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <button type="submit">Reconcile now</button>
          </form>
          {{/canReconcile}}
          {{#hasRuns}}
          <div class="scroll"><table>
            <thead><tr><th>Finished</th><th>App</th><th>Seen</th><th>Recorded</th><th>Revoked</th><th>Result</th></tr></thead>
            <tbody>
            {{#runs}}
            <tr><td class="nowrap">{{finishedAt}}</td><td>{{bundleID}}</td><td>{{seen}}</td><td>{{recorded}}</td><td>{{revoked}}</td><td>{{result}}</td></tr>
            {{/runs}}
            </tbody>
          </table></div>
          {{/hasRuns}}
          {{^runs}}<p class="muted">No run yet.</p>{{/runs}}
        </section>
        """

    static let sandbox = """
        <h1>Transaction manager</h1>
        <p class="muted">The embedded sandbox App Store. Sandbox time: <strong id="sandbox-now">{{now}}</strong> ({{clock}}).</p>
        <section class="card">
          <h2>Transactions</h2>
          {{#hasTransactions}}
          <div class="scroll"><table id="transactions">
            <thead><tr><th>Transaction</th><th>Tester</th><th>Product</th><th>Purchased</th><th>State</th><th>Actions</th></tr></thead>
            <tbody>
            {{#transactions}}
            <tr data-transaction="{{id}}"><td><code>{{id}}</code>{{#isRenewal}}<br><span class="muted">of {{originalID}}</span>{{/isRenewal}}</td><td>{{testerID}}</td><td>{{productID}}</td><td class="nowrap">{{purchased}}</td><td><span class="badge {{stateClass}}">{{state}}</span></td>
            <td class="actions">{{#revocable}}
              <form method="post" action="/dashboard/sandbox/action"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="refund"><input type="hidden" name="id" value="{{id}}">
                <select name="reason" aria-label="Refund reason"><option value="0">other</option><option value="1">app issue</option></select>
                <button type="submit" class="danger" data-action="refund">Refund</button></form>
              <form method="post" action="/dashboard/sandbox/action"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="revoke"><input type="hidden" name="id" value="{{id}}"><button type="submit" data-action="revoke">Revoke</button></form>
            {{/revocable}}</td></tr>
            {{/transactions}}
            </tbody>
          </table></div>
          {{/hasTransactions}}
          {{^transactions}}<p class="muted">No transactions yet.</p>{{/transactions}}
        </section>
        <section class="card">
          <h2>Waiting for approval</h2>
          {{#hasPending}}
          <div class="scroll"><table>
            <thead><tr><th>Pending purchase</th><th>Tester</th><th>Product</th><th>Reason</th><th>Actions</th></tr></thead>
            <tbody>
            {{#pending}}
            <tr><td><code>{{id}}</code></td><td>{{testerID}}</td><td>{{productID}}</td><td>{{reason}}</td>
            <td class="actions">
              <form method="post" action="/dashboard/sandbox/action"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="approve"><input type="hidden" name="id" value="{{id}}"><button type="submit">Approve</button></form>
              <form method="post" action="/dashboard/sandbox/action"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="decline"><input type="hidden" name="id" value="{{id}}"><button type="submit" class="danger">Decline</button></form>
            </td></tr>
            {{/pending}}
            </tbody>
          </table></div>
          {{/hasPending}}
          {{^pending}}<p class="muted">Nothing waits for approval.</p>{{/pending}}
        </section>
        <section class="card">
          <h2>Subscriptions</h2>
          {{#hasSubscriptions}}
          <div class="scroll"><table>
            <thead><tr><th>Original transaction</th><th>Tester</th><th>Product</th><th>Expires</th><th>Billing</th><th>Actions</th></tr></thead>
            <tbody>
            {{#subscriptions}}
            <tr><td><code>{{originalTransactionID}}</code></td><td>{{testerID}}</td><td>{{productID}}</td><td class="nowrap">{{expires}}</td><td>{{billing}}{{#billingFails}} <span class="badge revoked">renewals fail</span>{{/billingFails}}{{^autoRenewEnabled}} <span class="badge inactive">auto-renew off</span>{{/autoRenewEnabled}}</td>
            <td class="actions">
              <form method="post" action="/dashboard/sandbox/action"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="renew"><input type="hidden" name="id" value="{{originalTransactionID}}"><button type="submit">Renew now</button></form>
              {{^billingFails}}<form method="post" action="/dashboard/sandbox/action"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="fail-renewals"><input type="hidden" name="id" value="{{originalTransactionID}}"><button type="submit" class="danger">Fail renewals</button></form>{{/billingFails}}
              {{#billingFails}}<form method="post" action="/dashboard/sandbox/action"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="resolve-billing"><input type="hidden" name="id" value="{{originalTransactionID}}"><button type="submit">Resolve billing</button></form>{{/billingFails}}
            </td></tr>
            {{/subscriptions}}
            </tbody>
          </table></div>
          {{/hasSubscriptions}}
          {{^subscriptions}}<p class="muted">No subscriptions.</p>{{/subscriptions}}
        </section>
        <section class="card">
          <h2>Testers</h2>
          {{#hasTesters}}
          <div class="scroll"><table>
            <thead><tr><th>Tester</th><th>Storefront</th><th>Ask to buy</th><th>Actions</th></tr></thead>
            <tbody>
            {{#testers}}
            <tr><td><code>{{id}}</code><br><span class="muted">{{name}}</span></td>
            <td><form method="post" action="/dashboard/sandbox/action" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="storefront"><input type="hidden" name="id" value="{{id}}">
              <select name="storefront" aria-label="Storefront">{{#storefronts}}<option value="{{code}}"{{#selected}} selected{{/selected}}>{{code}}</option>{{/storefronts}}</select><button type="submit">Set</button></form></td>
            <td><form method="post" action="/dashboard/sandbox/action" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="ask-to-buy"><input type="hidden" name="id" value="{{id}}"><input type="hidden" name="enabled" value="{{toggleTo}}"><button type="submit">{{askToBuyLabel}}</button></form></td>
            <td class="actions"><form method="post" action="/dashboard/sandbox/action"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="clear"><input type="hidden" name="id" value="{{id}}"><button type="submit" class="danger">Clear history</button></form></td></tr>
            {{/testers}}
            </tbody>
          </table></div>
          {{/hasTesters}}
          <form method="post" action="/dashboard/sandbox/action" class="stack">
            <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="create-tester">
            <label for="tester-name">New tester</label>
            <div class="row"><input id="tester-name" name="name" placeholder="tester@example.com" required>
            <select name="storefront" aria-label="Storefront">{{#allStorefronts}}<option value="{{.}}">{{.}}</option>{{/allStorefronts}}</select>
            <button type="submit">Create</button></div>
          </form>
        </section>
        <div class="columns">
        <section class="card">
          <h2>Clock</h2>
          <form method="post" action="/dashboard/sandbox/action" class="stack">
            <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="advance">
            <label for="advance">Advance by</label>
            <div class="row"><select id="advance" name="seconds"><option value="3600">1 hour</option><option value="86400">1 day</option><option value="604800">7 days</option><option value="2678400">31 days</option><option value="31536000">365 days</option></select><button type="submit">Advance</button></div>
          </form>
          <form method="post" action="/dashboard/sandbox/action" class="stack">
            <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="rate">
            <label for="rate">Sandbox seconds per real second (0 stops the clock)</label>
            <div class="row"><input id="rate" name="rate" type="number" min="0" step="any" value="{{rate}}"><button type="submit">Set rate</button></div>
          </form>
        </section>
        <section class="card">
          <h2>Settings</h2>
          <form method="post" action="/dashboard/sandbox/action" class="stack">
            <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="settings">
            <label><input type="checkbox" name="askToBuy" value="true"{{#settings.askToBuy}} checked{{/settings.askToBuy}}> Ask to buy for every tester</label>
            <label for="grace">Grace period (days)</label><input id="grace" name="gracePeriodDays" type="number" min="0" value="{{settings.gracePeriodDays}}">
            <label for="fail">Fail every purchase with StoreKit error code (empty: succeed)</label><input id="fail" name="failPurchasesWith" type="number" min="0" value="{{settings.failPurchasesWith}}">
            <label for="url">Notification URL (empty: keep them queued)</label><input id="url" name="notificationURL" type="url" value="{{settings.notificationURL}}">
            <button type="submit">Save settings</button>
          </form>
        </section>
        </div>
        <section class="card">
          <h2>Notifications sent</h2>
          {{#hasNotifications}}
          <div class="scroll"><table>
            <thead><tr><th>Type</th><th>Subtype</th><th>Transaction</th><th>Delivery</th><th>Attempts</th></tr></thead>
            <tbody>
            {{#notifications}}
            <tr><td>{{type}}</td><td>{{subtype}}</td><td><code>{{transactionID}}</code></td><td><span class="badge {{stateClass}}">{{state}}</span></td><td>{{attempts}}</td></tr>
            {{/notifications}}
            </tbody>
          </table></div>
          {{/hasNotifications}}
          {{^notifications}}<p class="muted">None sent yet.</p>{{/notifications}}
        </section>
        {{#hasCertificates}}
        <section class="card">
          <h2>Certificates</h2>
          <p class="muted">What the sandbox signs with. Revoking the leaf or the intermediate makes the sandbox sign with new ones under the same root; its OCSP responder then answers revoked for the old ones.</p>
          <div class="scroll"><table id="certificates">
            <thead><tr><th>Certificate</th><th>Subject</th><th>Serial number</th><th>Valid until</th><th>Status</th><th>Actions</th></tr></thead>
            <tbody>
            {{#certificates}}
            <tr data-certificate="{{serialNumber}}"><td>{{kind}}</td><td class="details">{{subject}}</td><td><code>{{serialNumber}}</code></td><td class="nowrap">{{validUntil}}</td><td><span class="badge {{stateClass}}">{{state}}</span></td>
            <td class="actions">{{#revocable}}<form method="post" action="/dashboard/sandbox/action"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="revoke-certificate"><input type="hidden" name="certificate" value="{{kind}}"><button type="submit" class="danger" data-action="revoke-certificate">Revoke</button></form>{{/revocable}}</td></tr>
            {{/certificates}}
            </tbody>
          </table></div>
        </section>
        {{/hasCertificates}}
        """

    static let message = """
        <section class="card"><h1>{{heading}}</h1><p>{{text}}</p><p><a href="/dashboard">Back to the overview</a></p></section>
        """

    static let css = """
        *,*::before,*::after{box-sizing:border-box}
        html{-webkit-text-size-adjust:100%}
        body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#f4f5f8}
        a{color:#2557d6}
        code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}
        .top{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.6rem 1rem;background:#1d2330;color:#fff}
        .top a{color:#dfe6ff;text-decoration:none}
        .top .brand{font-weight:700;color:#fff;font-size:1.1rem}
        .top nav{display:flex;flex-wrap:wrap;gap:.25rem .9rem;flex:1}
        .top nav a[aria-current=page]{color:#fff;border-bottom:2px solid #8fb0ff}
        .top .logout button{background:transparent;border:1px solid #55607a;color:#dfe6ff}
        main{max-width:1100px;margin:0 auto;padding:1rem}
        h1{font-size:1.5rem;margin:.3rem 0 .6rem}
        h2{font-size:1.1rem;margin:0 0 .6rem}
        .card{background:#fff;border:1px solid #e1e4ec;border-radius:10px;padding:1rem;margin:0 0 1rem;min-width:0}
        .columns{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,320px),1fr));gap:1rem}
        .columns>.card{margin:0 0 1rem}
        .muted{color:#677086}
        .notice,.problem{padding:.6rem .8rem;border-radius:8px;margin:0 0 1rem}
        .notice{background:#e6f6ea;border:1px solid #9fd7ae}
        .problem{background:#fdeaea;border:1px solid #eba7a7}
        .scroll{overflow-x:auto;max-width:100%}
        table{border-collapse:collapse;width:100%;font-size:14px}
        th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid #edf0f5;vertical-align:top}
        th{font-weight:600;color:#4a5368;white-space:nowrap}
        td.nowrap{white-space:nowrap}
        td.details{word-break:break-word;min-width:12rem}
        td.actions form{display:inline-block;margin:0 .25rem .25rem 0}
        .badge{display:inline-block;padding:.05rem .45rem;border-radius:999px;font-size:12px;background:#eef1f7;color:#394256;white-space:nowrap}
        .badge.active,.badge.delivered,.badge.purchased,.badge.transaction{background:#e3f4e7;color:#1f6b35}
        .badge.inactive,.badge.expired,.badge.pending,.badge.notification{background:#fff4dc;color:#7a5a12}
        .badge.revoked,.badge.failed,.badge.refunded{background:#fde7e7;color:#9b2323}
        .badge.ledger{background:#e8eeff;color:#2a44a0}
        .badge.webhook{background:#f0e8ff;color:#5b2ea0}
        .figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(120px,1fr));gap:.75rem;margin-bottom:1rem}
        .figures div{background:#f7f8fb;border-radius:8px;padding:.6rem}
        .figure{display:block;font-size:1.5rem;font-weight:700}
        .figures span+span{color:#677086;font-size:13px}
        figure{margin:0 0 1rem}
        figcaption{font-size:13px;color:#4a5368;margin-bottom:.25rem}
        svg.chart{display:block;width:100%;height:auto}
        svg.chart .bar{fill:#5b84f0}
        svg.chart .line{fill:none;stroke:#1f9d55;stroke-width:2}
        svg.chart .area{fill:#1f9d5522}
        svg.chart text{font-size:10px;fill:#677086}
        svg.chart .axis{stroke:#c9cfdc;stroke-width:1}
        form{margin:0}
        label{display:block;font-weight:600;font-size:14px;margin:.4rem 0 .2rem}
        input,select,button{font:inherit;font-size:14px;padding:.4rem .55rem;border:1px solid #c7cedd;border-radius:7px;background:#fff;max-width:100%}
        input[type=checkbox]{padding:0;margin-right:.3rem}
        button{background:#2557d6;border-color:#2557d6;color:#fff;cursor:pointer}
        button.danger{background:#c73030;border-color:#c73030}
        .row{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center}
        .row input{flex:1 1 10rem;min-width:0}
        .stack{margin-bottom:.8rem}
        .stack input:not([type=checkbox]){width:100%}
        .inline{display:flex;flex-wrap:wrap;gap:.3rem;align-items:center}
        .login{max-width:420px;margin:3rem auto}
        .login input{width:100%;margin-bottom:.7rem}
        ul.plain{list-style:none;padding:0;margin:0}
        ul.plain li{padding:.35rem 0;border-bottom:1px solid #edf0f5}
        @media (max-width:600px){main{padding:.6rem}.card{padding:.75rem}h1{font-size:1.25rem}
        td.details{min-width:9rem}
        table.timeline thead{display:none}
        table.timeline tr{display:block;padding:.4rem 0;border-bottom:1px solid #edf0f5}
        table.timeline td{display:inline-block;border:0;padding:.1rem .4rem .1rem 0}
        table.timeline td.details{display:block;min-width:0}}
        """
}
