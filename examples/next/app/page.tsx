export default function Home() {
  return (
    <main>
      <h1>merchant-webhooks</h1>
      <p>
        Subscription notifications are received at <code>POST /webhooks/subscriptions</code>.
      </p>
    </main>
  );
}
