SET execution.runtime-mode = streaming; SET dipper.trigger = processing-time 10 s;
