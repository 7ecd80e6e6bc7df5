//! The two runs of one scenario side by side: moto's driver executions and the interpreter's,
//! and the check that they entered the same states with the same data.

use super::*;

impl Loop {
    /// Every driver execution on every deployed release machine, oldest first: (name, states
    /// entered in order, early wakes dropped; see `driver_path`).
    pub async fn moto_generations(&self) -> Vec<(String, Vec<String>)> {
        self.moto_paths()
            .await
            .into_iter()
            .map(|(name, path)| (name, path.normalised))
            .collect()
    }

    /// Every driver execution on every deployed release machine, oldest first, with its path.
    pub async fn moto_paths(&self) -> Vec<(String, DriverPath)> {
        let mut all = Vec::new();
        for r in &self.releases {
            let list = self
                .sfn
                .list_executions()
                .state_machine_arn(format!("{MACHINE_ARN}{}", r.driver))
                .send()
                .await
                .expect("list executions");
            for e in list.executions() {
                let started = e.start_date();
                all.push((
                    (started.secs(), started.subsec_nanos()),
                    e.name().to_owned(),
                    e.execution_arn().to_owned(),
                ));
            }
        }
        all.sort();
        let mut out = Vec::new();
        for (_, name, arn) in all {
            let path = driver_path(&self.sfn, &arn).await;
            if path.early_wakes > 0 {
                println!("{name}: {} early wake(s) on moto dropped", path.early_wakes);
            }
            out.push((name, path));
        }
        out
    }

    /// How many times driver `arn` left the await state: one per resume.
    pub async fn await_exits(&self, arn: &str) -> usize {
        let history = self
            .sfn
            .get_execution_history()
            .execution_arn(arn)
            .max_results(1000)
            .send()
            .await
            .expect("history");
        history
            .events()
            .iter()
            .filter_map(|e| e.state_exited_event_details())
            .filter(|d| d.name() == AWAIT)
            .count()
    }

    /// The same scenario in our interpreter, on the same compiled driver.
    pub fn simulate(&self) -> Run<'_> {
        let run = sfn::run(&self.subject, &self.scenario, proof::SEED).expect("simulate");
        assert!(
            run.unmet.is_empty(),
            "the interpreter run misses its own expectations: {:?}",
            run.unmet
        );
        run
    }

    /// Fails unless TPF's record of `id` (in DynamoDB) ended where the interpreter's did, after
    /// as many transitions: a duplicated or lost transition changes `version`.
    pub async fn assert_same_record(&self, id: &str, sim: &Run<'_>) {
        assert_eq!(
            self.record_summary(id).await,
            interpreter_record(sim),
            "TPF's record of {id}: loop on moto (left) vs interpreter (right)"
        );
    }

    /// The fields of TPF's record of `id` that `interpreter_record` gives for the interpreter.
    pub async fn record_summary(&self, id: &str) -> Value {
        let record = self.record(id).await;
        ["status", "stepIndex", "attempt", "version", "errorCode"]
            .iter()
            .map(|k| (k.to_string(), record[*k].clone()))
            .collect::<serde_json::Map<_, _>>()
            .into()
    }

    /// The interpreter's run of another scenario of the same matrix.
    pub fn simulate_other(&self, name: &str) -> Run<'_> {
        let other = matrix::derive(&self.subject)
            .into_iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no scenario `{name}`"));
        sfn::run(&self.subject, &other, proof::SEED).expect("simulate")
    }

    /// Fails unless moto's driver executions entered the same states, in the same order, as
    /// the interpreter's for the same scenario (generation by generation, oldest first).
    pub async fn cross_check(&self, sim: &Run<'_>) -> Vec<(String, Vec<String>)> {
        match self.compare(sim).await {
            Ok(generations) => generations,
            Err(why) => panic!("{why}"),
        }
    }

    /// `cross_check` without the panic: `Err` describes the disagreement.
    pub async fn compare(&self, sim: &Run<'_>) -> Result<Vec<(String, Vec<String>)>, String> {
        let paths = self.moto_paths().await;
        let on_moto: Vec<(String, Vec<String>)> = paths
            .iter()
            .map(|(n, p)| (n.clone(), p.normalised.clone()))
            .collect();
        let moto: Vec<&Vec<String>> = on_moto.iter().map(|(_, s)| s).collect();
        let interp = interpreter_generations(sim);
        let interp: Vec<&Vec<String>> = interp.iter().collect();
        if moto != interp {
            // Everything moto recorded, for the disagreement's write-up.
            let mut raw = String::new();
            for (name, _) in &on_moto {
                for r in &self.releases {
                    let arn = format!("{EXECUTION_ARN}{}:{name}", r.driver);
                    let history = self
                        .sfn
                        .get_execution_history()
                        .execution_arn(&arn)
                        .max_results(1000)
                        .send()
                        .await;
                    for e in history.iter().flat_map(|h| h.events()) {
                        let detail = e
                            .state_entered_event_details()
                            .map(|d| d.name().to_owned())
                            .or_else(|| {
                                e.task_failed_event_details()
                                    .and_then(|d| d.error().map(str::to_owned))
                            })
                            .unwrap_or_default();
                        raw.push_str(&format!("  {name} {:?} {detail}\n", e.r#type()));
                    }
                }
            }
            return Err(format!(
                "driver states entered per generation differ\n moto: {moto:?}\n ours: {interp:?}\nmoto's history:\n{raw}\n{}",
                self.logs()
            ));
        }
        // Same states; now the same data in them: the driver's counters and TPF's answers.
        for ((name, path), ours) in paths.iter().zip(interpreter_inputs(sim)) {
            let exact = path.early_wakes == 0;
            for (i, (theirs, ours)) in path.inputs.iter().zip(&ours).enumerate() {
                let (a, b) = (digest(theirs, exact), digest(ours, exact));
                if a != b {
                    return Err(format!(
                        "{name}: the input of state #{i} ({}) differs\n moto: {a}\n ours: {b}",
                        path.normalised[i]
                    ));
                }
            }
        }
        Ok(on_moto)
    }
}
