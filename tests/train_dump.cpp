// Ten training steps of a tiny model written out for tests/oracle_train.py: the parameters
// before them, each step's batch, loss and gradients (before Adam's update), and the
// parameters after. Usage: train_dump TASK cpu|gl MODE SEED [identical|unscaled|head_dim] > steps.json
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "headsplit/backends/backend_policy.hpp"
#include "headsplit/engine/config_edit.hpp"
#include "headsplit/training/trainer.hpp"

using namespace headsplit;

namespace {

nlohmann::json parameters(TinyModel m) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, values] : m.parameters()) out[name] = *values;
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::cerr << "usage: train_dump TASK cpu|gl MODE SEED [identical]\n";
        return 2;
    }
    try {
        TrainConfig c;
        c.task = parse_task(argv[1]);
        if (!backend_from_name(argv[2], &c.backend) || !mode_from_name(argv[3], &c.mode)) throw ConfigError("backend or mode");
        c.seed = std::stoull(argv[4]);
        c.identical_heads = argc > 5 && std::string(argv[5]) == "identical";
        if (argc > 5 && std::string(argv[5]) == "unscaled") c.scale = Scale::None;
        if (argc > 5 && std::string(argv[5]) == "head_dim") c.scale = Scale::HeadDim;
        c.batch = 8;
        c.steps = 10;
        BackendRequest request;
        request.kind = c.backend;
        BackendChoice choice = choose_backend(request);
        if (choice.fell_back(c.backend)) throw std::runtime_error("no GL here: " + choice.notice);
        Trainer trainer(c, *choice.backend);
        const TrainConfig& used = trainer.config();
        nlohmann::json doc = {{"task", argv[1]}, {"layers", used.layers}, {"heads", used.heads},
                              {"d_model", used.d_model}, {"lr", used.lr}, {"vocab", trainer.model().vocab},
                              {"tokens", trainer.model().tokens}, {"scale", scale_name(used.scale)},
                              {"before", parameters(trainer.model())}};
        nlohmann::json steps = nlohmann::json::array();
        for (int s = 0; s < 10; ++s) {
            const StepResult r = trainer.step();
            TinyModel m = trainer.model();
            nlohmann::json grads = nlohmann::json::object();
            std::size_t i = 0;
            for (const auto& p : m.parameters()) grads[p.first] = trainer.gradients()[i++];
            steps.push_back({{"ids", trainer.last_batch().ids}, {"targets", trainer.last_batch().targets},
                             {"loss", r.loss}, {"grads", grads}});
        }
        doc["steps"] = steps;
        doc["after"] = parameters(trainer.model());
        std::cout << doc.dump() << "\n";
    } catch (const std::exception& e) {
        std::cerr << "train_dump: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
